import { describe, expect, it } from 'vitest';
import { commandOutcome } from '../../src/outcomeModel';

const URI = 'file:///ws/naive_softmax.py';
// What server/engine/optimize/loop.py answers for a file that is not in KernelBench form (issue 23).
const NOT_KB =
  '/ws/naive_softmax.py is not in KernelBench form (missing Model, ModelNew, get_inputs, get_init_inputs) and none of ' +
  'its kernels has replayable launches recorded from its current text (tensors, scalars and constexprs; not ' +
  'descriptors): the gate needs a reference. Record the program that launches them (`tritonlens record -- COMMAND`, ' +
  "or the editor's Record command) to verify by replay, or add Model/ModelNew/get_inputs (see bench/README.md)";

describe('commandOutcome', () => {
  it('says why Optimize of a non-KernelBench file did nothing, and offers to record launches', () => {
    const out = commandOutcome('tritonlens.optimizeKernel', [URI, 'softmax_kernel'], { error: NOT_KB, offers: [] }, true);
    expect(out?.level).toBe('warning');
    expect(out?.message).toMatch(/^naive_softmax\.py is not in KernelBench form: record launches first.*then Optimize replays them/);
    expect(out?.actions).toEqual([{ label: 'Record launches', command: 'tritonlens.recordLaunches', args: [URI] }]);
    // a server without the record command: the message still says what to do, without a dead button
    expect(commandOutcome('tritonlens.optimizeKernel', [URI], { error: NOT_KB }, false)?.actions).toEqual([]);
  });

  it('explains an empty Optimize result with the first rejection', () => {
    const out = commandOutcome('tritonlens.optimizeKernel', [URI, 'k'], {
      error: null,
      offers: [],
      rejected: [{ id: 'c1', title: 'BLOCK 64 -> 256', stage: 'correctness', reason: 'max error 3.2 at shape a. more' }],
      declined: [],
      notes: [],
    });
    expect(out?.level).toBe('warning');
    expect(out?.message).toContain('No verified rewrite of k: 1 candidate(s) rejected (first: BLOCK 64 -> 256: max error 3.2 at shape a.)');
    expect(out?.message).toContain('optimizeBudget');
  });

  it('stays quiet when Optimize has offers (the diff offer speaks) and names a cancel', () => {
    expect(commandOutcome('tritonlens.optimizeKernel', [URI, 'k'], { offers: [{ id: 'c1' }] })).toBeUndefined();
    expect(commandOutcome('tritonlens.optimizeKernel', [URI, 'k'], { cancelled: true })?.message).toBe('Optimize of k cancelled.');
  });

  it('turns profile rows with errors, missing runners and notes into one message', () => {
    const out = commandOutcome('tritonlens.profileKernel', [URI, 'k'], [
      { kernel: 'k', target: 'local', runnerUnavailable: true, error: 'the cuda runner environment is not set up: run x', cancelled: false },
    ]);
    expect(out?.level).toBe('error');
    expect(out?.message).toMatch(/Profile of k: no runner for it .*Set tritonlens\.runners/);
    expect(out?.actions[0].command).toBe('workbench.action.openSettings');
    const failed = commandOutcome('tritonlens.profileKernel', [URI], [{ kernel: 'k', error: 'no launch of k recorded: the harness ran but launched none of them' }]);
    expect(failed).toMatchObject({ level: 'warning', message: 'Profile of k failed: no launch of k recorded: the harness ran but launched none of them' });
    const small = commandOutcome('tritonlens.profileKernel', [URI], [
      { kernel: 'k', error: null, launches: 1, note: 'interpret: at the smallest TEST_SHAPES entry (N=1000), not the benchmark size' },
    ]);
    expect(small).toMatchObject({ level: 'info', message: 'Interpret: at the smallest TEST_SHAPES entry (N=1000), not the benchmark size.' });
  });

  it('stays quiet for a clean profile and reports nothing-to-do answers', () => {
    expect(commandOutcome('tritonlens.profileKernel', [URI], [{ kernel: 'k', error: null, launches: 2 }])).toBeUndefined();
    expect(commandOutcome('tritonlens.analyzeKernel', [URI], [])?.message).toBe('Analyze found no Triton kernel to work on in naive_softmax.py.');
    expect(commandOutcome('tritonlens.profileKernel', [URI], undefined)?.level).toBe('error');
  });
});
