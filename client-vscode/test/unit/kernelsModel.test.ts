import { describe, expect, it } from 'vitest';
import { formatTime, groupByFile, kernelAt, kernelDescription, parseKernels } from '../../src/kernelsModel';

const rows = parseKernels([
  { uri: 'file:///ws/b.py', path: '/ws/b.py', name: 'late', line: 30, findings: [] },
  {
    uri: 'file:///ws/b.py',
    path: '/ws/b.py',
    name: 'early',
    line: 5,
    findings: [{ code: 'TL101', message: 'm', severity: 'warning', level: 1, line: 6, col: 4 }],
    last_time_us: 1534.2,
  },
  { uri: 'file:///ws/a.py', path: '/ws/a.py', name: 'k', line: 1, findings: 'bad' },
  { name: 'no uri' },
  null,
]);

describe('parseKernels', () => {
  it('keeps well-formed rows and skips malformed ones', () => {
    expect(rows.map((r) => r.name)).toEqual(['late', 'early', 'k']);
    expect(rows[1].findings[0]).toEqual({ code: 'TL101', message: 'm', severity: 'warning', level: 1, line: 6, col: 4 });
    expect(rows[1].lastTimeUs).toBe(1534.2);
    expect(rows[2].findings).toEqual([]);
  });
  it('returns nothing for a non-list answer', () => {
    expect(parseKernels({ error: 'x' })).toEqual([]);
    expect(parseKernels(null)).toEqual([]);
  });
  it('defaults an unknown severity to warning', () => {
    const [row] = parseKernels([{ uri: 'u', name: 'n', findings: [{ code: 'X', message: 'y', severity: 'fatal' }] }]);
    expect(row.findings[0].severity).toBe('warning');
  });
});

describe('groupByFile', () => {
  it('orders files by path and kernels by line', () => {
    const groups = groupByFile(rows);
    expect(groups.map((g) => g.path)).toEqual(['/ws/a.py', '/ws/b.py']);
    expect(groups[1].kernels.map((k) => k.name)).toEqual(['early', 'late']);
  });
});

describe('kernelAt', () => {
  it('finds the kernel whose def is the nearest one above the cursor', () => {
    expect(kernelAt(rows, 'file:///ws/b.py', 10)?.name).toBe('early'); // 0-based line 10 is line 11
    expect(kernelAt(rows, 'file:///ws/b.py', 29)?.name).toBe('late'); // def line itself
    expect(kernelAt(rows, 'file:///ws/b.py', 28)?.name).toBe('early');
  });
  it('falls back to the first kernel of the file above all defs, and to none in other files', () => {
    expect(kernelAt(rows, 'file:///ws/b.py', 0)?.name).toBe('late');
    expect(kernelAt(rows, 'file:///ws/c.py', 3)).toBeUndefined();
  });
});

describe('kernelDescription', () => {
  it('counts findings and shows the last measured time', () => {
    expect(kernelDescription(rows[1])).toBe('1 finding · last 1.53 ms');
    expect(kernelDescription(rows[0])).toBe('no findings');
  });
  it('formats times in µs and ms', () => {
    expect(formatTime(12.34)).toBe('12.3 µs');
    expect(formatTime(250)).toBe('250 µs');
    expect(formatTime(25000)).toBe('25.0 ms');
  });
});
