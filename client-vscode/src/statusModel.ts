// The status bar's content as a pure function of server state, current work and runner reachability.
import type { Activity, ProgressEntry } from './activity';
import { unprefixed } from './commandModel';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

export interface RunnerStatus {
  name: string; // e.g. "local cuda", "remote https://npu-box"
  reachable: boolean;
  detail?: string;
}

export interface StatusInput {
  server: ServerState;
  serverDetail?: string;
  activity: Activity;
  current?: ProgressEntry;
  runners?: RunnerStatus[]; // undefined: the server has not said
  /** Platforms the workspace's kernel files are written for (tritonlens/kernels rows); undefined: not known yet. */
  neededPlatforms?: ReadonlySet<string>;
}

/** The platform a local runner serves ("local ascend" -> "ascend"); undefined for remote runners. */
function localPlatform(name: string): string | undefined {
  const m = /^local (\w+)$/.exec(name);
  return m ? m[1] : undefined;
}

/** Whether the workspace needs this runner: remote ones always; a local one when a kernel file targets it. */
export function runnerNeeded(name: string, needed: ReadonlySet<string> | undefined): boolean {
  const platform = localPlatform(name);
  return platform === undefined || needed === undefined || needed.has(platform);
}

/**
 * The server's setup hint, in the shape the editor's settings accept: the runner library says `the runner config
 * {"ascend": {"python": PATH}}` (its CLI config), the VS Code schema takes tritonlens.runners.local.ascend.
 */
export function editorHint(detail: string): string {
  return detail.replace(
    /the runner config \{"(\w+)": \{"python": PATH\}\}/g,
    (_m, env: string) => `the setting "tritonlens.runners": {"local": {"${env}": "/path/to/python"}}`,
  );
}

/** Union of the `platforms` of tritonlens/kernels rows; undefined when no row says (an older server). */
export function platformsOfKernels(rows: unknown): Set<string> | undefined {
  if (!Array.isArray(rows)) return undefined;
  const out = new Set<string>();
  let said = false;
  for (const row of rows) {
    const platforms = (row as { platforms?: unknown } | null)?.platforms;
    if (!Array.isArray(platforms)) continue;
    said = true;
    for (const p of platforms) if (typeof p === 'string') out.add(p);
  }
  return said ? out : undefined;
}

export interface StatusView {
  text: string;
  tooltip: string;
  severity: 'normal' | 'warning' | 'error';
}

/** Reads the server's `tritonlens/status` notification leniently: unknown shapes yield undefined. */
export function parseRunnerStatus(raw: unknown): RunnerStatus[] | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const runners = (raw as { runners?: unknown }).runners;
  if (!Array.isArray(runners)) return undefined;
  const out: RunnerStatus[] = [];
  for (const r of runners) {
    if (!r || typeof r !== 'object') continue;
    const { name, reachable, detail } = r as Record<string, unknown>;
    if (typeof name !== 'string' || typeof reachable !== 'boolean') continue;
    out.push({ name, reachable, detail: typeof detail === 'string' ? detail : undefined });
  }
  return out;
}

export function renderStatus(input: StatusInput): StatusView {
  const lines: string[] = [];
  let severity: StatusView['severity'] = 'normal';
  let text: string;
  switch (input.server) {
    case 'starting':
      text = '$(loading~spin) tritonlens';
      lines.push('Language server starting');
      break;
    case 'stopped':
      text = '$(debug-stop) tritonlens';
      lines.push('Language server stopped');
      severity = 'warning';
      break;
    case 'failed':
      text = '$(error) tritonlens';
      lines.push(`Language server failed${input.serverDetail ? `: ${input.serverDetail}` : ''}`);
      severity = 'error';
      break;
    default: {
      const icon = { idle: '$(check)', analyzing: '$(sync~spin)', profiling: '$(pulse)' }[input.activity];
      text = `${icon} tritonlens: ${input.activity}`;
      const what = input.current ? `${unprefixed(input.current.title)}${input.current.message ? ` - ${input.current.message}` : ''}` : '';
      lines.push(input.activity === 'idle' ? 'Idle' : `${input.activity}: ${what}`);
    }
  }
  if (input.server !== 'failed' && input.serverDetail) lines.push(input.serverDetail);
  if (input.runners === undefined) {
    lines.push('Runners: not reported yet');
  } else if (input.runners.length === 0) {
    lines.push('Runners: none configured (pattern triage only)');
  } else {
    for (const r of input.runners) {
      const unneeded = !r.reachable && !runnerNeeded(r.name, input.neededPlatforms);
      const state = r.reachable ? 'reachable' : unneeded ? 'not set up (no kernel file here needs it)' : 'unreachable';
      lines.push(`Runner ${r.name}: ${state}${r.detail ? ` (${editorHint(r.detail)})` : ''}`);
    }
    // A missing runner for a platform no file of this workspace targets is no problem: stay neutral.
    const down = input.runners.filter((r) => !r.reachable && runnerNeeded(r.name, input.neededPlatforms)).length;
    if (down > 0) {
      text += ` $(debug-disconnect)${down === input.runners.length ? '' : ` ${down}`}`;
      if (severity === 'normal') severity = 'warning';
    }
  }
  lines.push('Click to show the log');
  return { text, tooltip: lines.join('\n'), severity };
}

/**
 * Runner reachability learned from a command's answer: analyze/profile return one row per kernel with
 * `target`, `runnerUnavailable` and `error`. Rows update the runner of their target in `previous`.
 */
export function runnersFromCommandResult(result: unknown, previous: RunnerStatus[] | undefined): RunnerStatus[] | undefined {
  if (!Array.isArray(result)) return previous;
  const byName = new Map((previous ?? []).map((r) => [r.name, r]));
  let seen = false;
  for (const row of result) {
    if (!row || typeof row !== 'object') continue;
    const { target, runnerUnavailable, error } = row as Record<string, unknown>;
    if (typeof target !== 'string' || typeof runnerUnavailable !== 'boolean') continue;
    seen = true;
    const name = target;
    byName.set(name, {
      name,
      reachable: !runnerUnavailable,
      detail: runnerUnavailable && typeof error === 'string' ? error : undefined,
    });
  }
  return seen ? [...byName.values()] : previous;
}
