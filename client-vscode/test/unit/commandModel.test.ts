import { describe, expect, it } from 'vitest';
import { advertisedCommands, defaultArguments, fallbackCommands, progressTitle } from '../../src/commandModel';
import { parseKernels } from '../../src/kernelsModel';
import { parseShowIrArgs } from '../../src/showIrArgs';
import { targetItems } from '../../src/targetPick';

const kernels = parseKernels([
  { uri: 'file:///ws/k.py', path: '/ws/k.py', name: 'first', line: 4, findings: [] },
  { uri: 'file:///ws/k.py', path: '/ws/k.py', name: 'second', line: 20, findings: [] },
]);

describe('fallbackCommands', () => {
  it('lists contributed server commands the server does not advertise', () => {
    const got = fallbackCommands(['tritonlens.analyzeKernel', 'tritonlens.kernelFindings'], [
      'tritonlens.analyzeKernel',
      'tritonlens.profileKernel',
    ]);
    expect(got).toEqual(['tritonlens.profileKernel']);
  });
});

describe('defaultArguments', () => {
  const editor = { uri: 'file:///ws/k.py', languageId: 'python', line: 25 };
  it('passes explicit arguments through', () => {
    expect(defaultArguments(['u', 'k'], undefined, [])).toEqual(['u', 'k']);
  });
  it('uses the active document and the kernel around the cursor', () => {
    expect(defaultArguments([], editor, kernels)).toEqual(['file:///ws/k.py', 'second']);
    expect(defaultArguments([], { ...editor, line: 5 }, kernels)).toEqual(['file:///ws/k.py', 'first']);
  });
  it('explains when there is nothing to act on', () => {
    expect(defaultArguments([], undefined, kernels)).toHaveProperty('error');
    expect(defaultArguments([], { ...editor, languageId: 'markdown' }, kernels)).toHaveProperty('error');
    expect(defaultArguments([], { ...editor, uri: 'file:///other.py' }, kernels)).toEqual({
      error: expect.stringMatching(/No Triton kernel/),
    });
  });
});

describe('progressTitle', () => {
  it('names the work and the kernel', () => {
    expect(progressTitle('tritonlens.profileKernel', ['u', 'softmax'])).toBe('tritonlens: Profiling softmax');
    expect(progressTitle('tritonlens.fooBar', [])).toBe('tritonlens: Running fooBar');
  });
});

describe('advertisedCommands', () => {
  it('reads executeCommandProvider.commands and tolerates other shapes', () => {
    expect(advertisedCommands({ executeCommandProvider: { commands: ['a', 3, 'b'] } })).toEqual(['a', 'b']);
    expect(advertisedCommands({})).toEqual([]);
    expect(advertisedCommands(undefined)).toEqual([]);
  });
});

describe('parseShowIrArgs', () => {
  it('reads positional and object forms; line is 1-based and must be positive', () => {
    expect(parseShowIrArgs(['u', 'k', 'ptx', 12])).toEqual({ uri: 'u', kernel: 'k', stage: 'ptx', line: 12 });
    expect(parseShowIrArgs([{ uri: 'u', stage: 'sass', line: 0 }])).toEqual({ uri: 'u', kernel: undefined, stage: 'sass', line: undefined });
    expect(parseShowIrArgs([])).toEqual({ uri: undefined, kernel: undefined, stage: undefined, line: undefined });
  });
});

describe('targetItems', () => {
  it('offers platforms and IR devices, marking the current ones', () => {
    const items = targetItems('cuda', 'ascend910b3');
    const values = items.filter((i) => !i.separator).map((i) => `${i.setting}=${i.value}`);
    expect(values).toEqual([
      'target=auto',
      'target=cuda',
      'target=ascend',
      'target=both',
      'irTarget=auto',
      'irTarget=sm_90',
      'irTarget=sm_80',
      'irTarget=sm_100',
      'irTarget=ascend910b3',
    ]);
    expect(items.find((i) => i.value === 'cuda')?.description).toMatch(/current/);
    expect(items.find((i) => i.value === 'both')?.description).not.toMatch(/current/);
    expect(items.find((i) => i.value === 'ascend910b3')?.description).toMatch(/current/);
  });
});
