import { describe, expect, it } from 'vitest';
import {
  defaultStages,
  irDocumentAddress,
  irRangesForSourceLine,
  parseIrQuery,
  parseIrResult,
  sourceLinesForIrLine,
  toRanges,
} from '../../src/irModel';

describe('IR document address', () => {
  it('round-trips the query and names the tab after kernel and stage', () => {
    const q = { uri: 'file:///ws/k.py', kernel: 'add_kernel', stage: 'ttgir', target: 'sm_90' };
    const addr = irDocumentAddress(q);
    expect(addr.path).toBe('/add_kernel.ttgir');
    expect(parseIrQuery(addr.query)).toEqual(q);
  });
  it('sanitizes odd kernel names in the path only', () => {
    const addr = irDocumentAddress({ uri: 'u', kernel: 'a/b c', stage: 'ptx' });
    expect(addr.path).toBe('/a_b_c.ptx');
    expect(parseIrQuery(addr.query)?.kernel).toBe('a/b c');
  });
  it('rejects malformed queries', () => {
    expect(parseIrQuery('not json')).toBeUndefined();
    expect(parseIrQuery('{"uri": "u"}')).toBeUndefined();
  });
});

describe('parseIrResult', () => {
  it('keeps valid line pairs and stages', () => {
    const r = parseIrResult({ text: 'x', lineMap: [[3, 10], [3, 'a'], [4], [5, 12]], stages: ['ttir', 1, 'ttgir'] });
    expect(r.lineMap).toEqual([
      [3, 10],
      [5, 12],
    ]);
    expect(r.stages).toEqual(['ttir', 'ttgir']);
  });
  it("reports the server's error and the stage it actually returned", () => {
    expect(() => parseIrResult({ error: 'no runner for sm_90: run scripts/bootstrap --all', stages: [] })).toThrow(/no runner/);
    expect(parseIrResult({ text: 'x', stage: 'ttir', stages: ['ttir'] }).stage).toBe('ttir');
  });
  it('throws a clear message when there is no text', () => {
    expect(() => parseIrResult(null)).toThrow(/no result/);
    expect(() => parseIrResult({ lineMap: [] })).toThrow(/no text/);
  });
});

describe('line lookup', () => {
  const map: Array<[number, number]> = [
    [3, 10],
    [3, 11],
    [3, 12],
    [3, 20],
    [4, 13],
  ];
  it('maps a 0-based source line to 0-based IR ranges, merging runs', () => {
    expect(irRangesForSourceLine(map, 2)).toEqual([
      { start: 9, end: 11 },
      { start: 19, end: 19 },
    ]);
    expect(irRangesForSourceLine(map, 3)).toEqual([{ start: 12, end: 12 }]);
    expect(irRangesForSourceLine(map, 0)).toEqual([]);
  });
  it('maps an IR line back to source lines', () => {
    expect(sourceLinesForIrLine(map, 12)).toEqual([3]);
    expect(sourceLinesForIrLine(map, 0)).toEqual([]);
  });
  it('merges unsorted duplicates into ranges', () => {
    expect(toRanges([5, 3, 4, 4, 9])).toEqual([
      { start: 3, end: 5 },
      { start: 9, end: 9 },
    ]);
  });
  it('offers stages by platform of the IR target', () => {
    expect(defaultStages('ascend910b3')).toContain('ttadapter');
    expect(defaultStages('sm_90')).toContain('sass');
    expect(defaultStages(undefined)).toContain('ptx');
  });
});
