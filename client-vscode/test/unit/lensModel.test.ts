import { describe, expect, it } from 'vitest';
import { defaultArguments } from '../../src/commandModel';
import { combineLens, groupByPosition, shortTitle } from '../../src/lensModel';

// The server's per-feature lens titles on one kernel (server/*_lsp.py lens_command), as issue 23 saw them.
const PARTS = [
  { feature: 'findings', title: 'tritonlens: 2 findings (2 warning)' },
  { feature: 'compile', title: 'tritonlens: compile for sm_90 and explain' },
  { feature: 'profile', title: 'tritonlens: profile' },
  { feature: 'record', title: 'tritonlens: no launches recorded (IR uses assumed values): record from a test or script' },
  { feature: 'optimize', title: 'tritonlens: optimize' },
];

describe('combineLens', () => {
  it('makes one short lens with the headline action first and "tritonlens:" once', () => {
    const { title, tooltip, headline } = combineLens(PARTS);
    expect(headline).toBe(4); // optimize keeps its command
    expect(title).toBe('tritonlens: optimize · 2 findings');
    expect(title.match(/tritonlens/g)).toHaveLength(1);
    const joined = PARTS.map((p) => p.title).join(' | ');
    expect(joined.length).toBeGreaterThan(150);
    expect(title.length).toBeLessThan(50);
    // nothing lost: every part's text is in the tooltip, without the prefix
    expect(tooltip.split('\n')).toEqual([
      '2 findings (2 warning)',
      'compile for sm_90 and explain',
      'profile',
      'no launches recorded (IR uses assumed values): record from a test or script',
      'Click: optimize',
      'More actions: the Triton kernels view (right-click a kernel) and the lightbulb on each finding.',
    ]);
  });

  it('adds the measured time once a kernel was profiled, and falls back to the findings lens alone', () => {
    const profiled = PARTS.map((p) =>
      p.feature === 'profile' ? { ...p, title: 'tritonlens profile (NVIDIA H200): median 12.3 us, 3,100 GB/s, 65% of peak, memory-bound' } : p,
    );
    expect(combineLens(profiled).title).toBe('tritonlens: optimize · 2 findings · 12.3 us');
    expect(combineLens([{ feature: 'findings', title: 'tritonlens: no findings' }]).title).toBe('tritonlens: no findings');
    expect(shortTitle('tritonlens profile (cpu): 1 launch(es)')).toBe('profile (cpu): 1 launch(es)');
  });

  it('groups lenses by the kernel they sit on', () => {
    const lenses = [{ at: '3:4', f: 'a' }, { at: '9:4', f: 'b' }, { at: '3:4', f: 'c' }];
    expect(groupByPosition(lenses, (l) => l.at).map((g) => g.map((l) => l.f))).toEqual([['a', 'c'], ['b']]);
  });
});

describe('commands from the Triton kernels view', () => {
  it('turn the kernel node into the server arguments [uri, kernel]', () => {
    const node = { kind: 'kernel', row: { uri: 'file:///w/k.py', name: 'softmax_kernel', line: 3, findings: [] } };
    expect(defaultArguments([node], undefined, [])).toEqual(['file:///w/k.py', 'softmax_kernel']);
    expect(defaultArguments(['file:///x.py', 'k'], undefined, [])).toEqual(['file:///x.py', 'k']);
  });
});
