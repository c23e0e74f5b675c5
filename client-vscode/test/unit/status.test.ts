import { describe, expect, it } from 'vitest';
import { ActivityTracker, classify } from '../../src/activity';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunnerStatus, platformsOfKernels, renderStatus, runnersFromCommandResult } from '../../src/statusModel';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const manifest: any = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));

describe('ActivityTracker', () => {
  it('goes idle -> analyzing -> profiling -> idle as work begins and ends', () => {
    const t = new ActivityTracker();
    let changes = 0;
    t.onDidChange(() => changes++);
    expect(t.activity).toBe('idle');
    t.begin({ token: 'a', title: 'Compiling softmax for sm_90' });
    expect(t.activity).toBe('analyzing');
    t.begin({ token: 'p', title: 'Running', command: 'tritonlens.profileKernel' });
    expect(t.activity).toBe('profiling');
    t.report('p', 'warmup', 10);
    expect(t.current).toMatchObject({ token: 'p', message: 'warmup', percentage: 10 });
    t.end('p');
    expect(t.activity).toBe('analyzing');
    t.end('a');
    expect(t.activity).toBe('idle');
    t.end('a'); // unknown token: no change event
    expect(changes).toBe(5);
  });
  it('classifies by title when no command is known', () => {
    expect(classify({ token: 'x', title: 'Profiling add_kernel' })).toBe('profiling');
    expect(classify({ token: 'x', title: 'Compile', message: 'measuring with ncu' })).toBe('profiling');
    expect(classify({ token: 'x', title: 'Compile' })).toBe('analyzing');
  });
});

describe('renderStatus', () => {
  it('shows the activity while running', () => {
    const v = renderStatus({ server: 'running', activity: 'profiling', current: { token: 't', title: 'Profiling k', message: '3/10' }, runners: [] });
    expect(v.text).toContain('profiling');
    expect(v.tooltip).toContain('Profiling k - 3/10');
    expect(v.tooltip).toContain('none configured');
    expect(v.severity).toBe('normal');
  });
  it('flags unreachable runners', () => {
    const v = renderStatus({
      server: 'running',
      activity: 'idle',
      runners: [
        { name: 'local cuda', reachable: true },
        { name: 'remote https://npu', reachable: false, detail: 'connection refused' },
      ],
    });
    expect(v.text).toContain('$(debug-disconnect) 1');
    expect(v.tooltip).toContain('Runner remote https://npu: unreachable (connection refused)');
    expect(v.severity).toBe('warning');
  });
  it('shows a failed server as an error with its reason', () => {
    const v = renderStatus({ server: 'failed', serverDetail: 'tritonlens is not importable', activity: 'idle' });
    expect(v.severity).toBe('error');
    expect(v.tooltip).toContain('tritonlens is not importable');
  });
});

describe('parseRunnerStatus', () => {
  it('reads runners and skips malformed entries', () => {
    expect(parseRunnerStatus({ runners: [{ name: 'a', reachable: true }, { name: 'b' }, 3] })).toEqual([
      { name: 'a', reachable: true, detail: undefined },
    ]);
    expect(parseRunnerStatus({})).toBeUndefined();
    expect(parseRunnerStatus('x')).toBeUndefined();
  });
});

describe('runnersFromCommandResult', () => {
  it('learns reachability per target from analyze rows and keeps other runners', () => {
    const first = runnersFromCommandResult(
      [{ kernel: 'k', target: 'sm_90', runnerUnavailable: true, error: 'no cuda environment: run scripts/bootstrap --all' }],
      undefined,
    );
    expect(first).toEqual([{ name: 'sm_90', reachable: false, detail: 'no cuda environment: run scripts/bootstrap --all' }]);
    const second = runnersFromCommandResult([{ target: 'ascend910b3', runnerUnavailable: false }], first);
    expect(second?.map((r) => `${r.name}:${r.reachable}`)).toEqual(['sm_90:false', 'ascend910b3:true']);
    const fixed = runnersFromCommandResult([{ target: 'sm_90', runnerUnavailable: false, error: null }], second);
    expect(fixed?.[0]).toEqual({ name: 'sm_90', reachable: true, detail: undefined });
  });
  it('leaves the list alone for answers without runner information', () => {
    const prev = [{ name: 'x', reachable: true }];
    expect(runnersFromCommandResult(undefined, prev)).toBe(prev);
    expect(runnersFromCommandResult([{ kernel: 'k' }], prev)).toBe(prev);
    expect(runnersFromCommandResult([], undefined)).toBeUndefined();
  });
});

describe('runners a workspace does not need (issue 23)', () => {
  // What the runner library says for a missing environment (ascend_runner/environments.py, _setup_hint).
  const ASCEND_HINT =
    'the ascend runner environment is not set up: run `scripts/bootstrap --all` in the tritonlens checkout (it creates ' +
    '.envs/ascend), or point $TRITONLENS_ASCEND_PYTHON (or the runner config {"ascend": {"python": PATH}}) at a Python ' +
    'that has triton-ascend installed';
  const runners = [
    { name: 'local cuda', reachable: true, detail: '/x/python (triton 3.6)' },
    { name: 'local ascend', reachable: false, detail: ASCEND_HINT },
  ];

  it('stays neutral in a CUDA-only workspace when only the Ascend runner is missing', () => {
    const v = renderStatus({ server: 'running', activity: 'idle', runners, neededPlatforms: new Set(['cuda']) });
    expect(v.severity).toBe('normal');
    expect(v.text).not.toContain('debug-disconnect');
    expect(v.tooltip).toContain('Runner local ascend: not set up (no kernel file here needs it)');
  });

  it('warns when a file needs the missing runner, or before the files are known', () => {
    expect(renderStatus({ server: 'running', activity: 'idle', runners, neededPlatforms: new Set(['cuda', 'ascend']) }).severity).toBe('warning');
    expect(renderStatus({ server: 'running', activity: 'idle', runners }).severity).toBe('warning');
    expect(renderStatus({ server: 'running', activity: 'idle', runners: [{ name: 'remote https://npu', reachable: false }], neededPlatforms: new Set(['cuda']) }).severity).toBe('warning');
  });

  it('suggests a settings shape that package.json accepts', () => {
    const tooltip = renderStatus({ server: 'running', activity: 'idle', runners, neededPlatforms: new Set(['ascend']) }).tooltip;
    expect(tooltip).not.toContain('{"ascend": {"python": PATH}}');
    const m = /"tritonlens\.runners": (\{.*?\}\})/.exec(tooltip);
    expect(m).not.toBeNull();
    const suggested = JSON.parse(m![1]) as Record<string, Record<string, unknown>>;
    const schema = manifest.contributes.configuration.properties['tritonlens.runners'];
    for (const [section, value] of Object.entries(suggested)) {
      const sub = schema.properties[section];
      expect(sub, `tritonlens.runners.${section}`).toBeDefined();
      for (const [key, v] of Object.entries(value)) expect(typeof v).toBe(sub.properties[key].type);
    }
  });

  it('reads the platforms of the kernels rows', () => {
    expect(platformsOfKernels([{ platforms: ['cuda'] }, { platforms: ['cuda', 'ascend'] }])).toEqual(new Set(['cuda', 'ascend']));
    expect(platformsOfKernels([{ name: 'k' }])).toBeUndefined();
  });
});
