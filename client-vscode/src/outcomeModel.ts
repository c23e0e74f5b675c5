// What a long command's answer means for the user: every error or empty result of Optimize, Profile, Analyze and
// Record becomes one message that says why and what to do (never only a changed code lens). No vscode imports.
import { Commands } from './constants';

export interface Outcome {
  level: 'info' | 'warning' | 'error';
  message: string;
  /** Buttons: a label and the command (with arguments) it runs. */
  actions: { label: string; command: string; args: unknown[] }[];
}

const RECORD_COMMAND = 'tritonlens.recordLaunches';

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

function fileOf(uri: unknown): string {
  const raw = typeof uri === 'string' ? uri : '';
  return decodeURIComponent(raw.replace(/[?#].*$/, '').split('/').pop() || 'this file');
}

function firstSentence(text: string, max = 220): string {
  const cut = text.split(/(?<=[.;])\s/)[0] ?? text;
  return cut.length > max ? `${cut.slice(0, max - 1)}…` : cut;
}

/** The optimize engine's errors, said short with the next step; anything else is passed on as the server said it. */
function optimizeError(error: string, uri: unknown, canRecord: boolean): Outcome {
  const file = fileOf(uri);
  if (/not in KernelBench form/.test(error)) {
    return {
      level: 'warning',
      message:
        `${file} is not in KernelBench form: record launches first (a test or script that runs its kernels), ` +
        'then Optimize replays them. Or add Model/ModelNew/get_inputs (bench/README.md).',
      actions: canRecord && typeof uri === 'string' ? [{ label: 'Record launches', command: RECORD_COMMAND, args: [uri] }] : [],
    };
  }
  if (/no @triton\.jit kernel/.test(error)) {
    return { level: 'warning', message: `${file} has no @triton.jit kernel to optimize.`, actions: [] };
  }
  return { level: 'error', message: `Optimize could not run: ${firstSentence(error, 400)}`, actions: [] };
}

function optimizeOutcome(result: Record<string, unknown>, args: unknown[], canRecord: boolean): Outcome | undefined {
  const kernel = str(args[1]) ?? fileOf(args[0]);
  if (result.cancelled === true) return { level: 'info', message: `Optimize of ${kernel} cancelled.`, actions: [] };
  const error = str(result.error);
  if (error) return optimizeError(error, args[0], canRecord);
  const offers = Array.isArray(result.offers) ? result.offers : [];
  if (offers.length > 0) return undefined; // the diff offer (extension.ts) says what was verified
  const rejected = Array.isArray(result.rejected) ? (result.rejected as Record<string, unknown>[]) : [];
  const declined = Array.isArray(result.declined) ? (result.declined as Record<string, unknown>[]) : [];
  const notes = Array.isArray(result.notes) ? result.notes.filter((n): n is string => typeof n === 'string') : [];
  const why: string[] = [];
  if (rejected.length > 0) {
    const first = rejected[0];
    why.push(`${rejected.length} candidate(s) rejected (first: ${str(first.title) ?? str(first.id) ?? '?'}: ${firstSentence(str(first.reason) ?? 'no reason given', 160)})`);
  }
  if (declined.length > 0) why.push(`${declined.length} declined`);
  if (why.length === 0) why.push(notes.find((n) => /no new candidate/.test(n)) ?? 'no rule proposed a rewrite for its findings');
  return {
    level: 'warning',
    message: `No verified rewrite of ${kernel}: ${why.join('; ')}. Try a larger tritonlens.optimizeBudget, or an LLM (tritonlens.llm).`,
    actions: [{ label: 'Show log', command: Commands.showOutput, args: [] }],
  };
}

/** Rows of profile / analyze answers: one per kernel with `error`, `runnerUnavailable`, `cancelled`, `note`. */
function rowsOutcome(verb: string, rows: unknown[]): Outcome | undefined {
  const messages: string[] = [];
  let level: Outcome['level'] = 'info';
  const actions: Outcome['actions'] = [];
  for (const raw of rows) {
    if (!raw || typeof raw !== 'object') continue;
    const row = raw as Record<string, unknown>;
    const kernel = str(row.kernel) ?? 'kernel';
    if (row.cancelled === true) {
      messages.push(`${verb} of ${kernel} cancelled.`);
      continue;
    }
    const error = str(row.error);
    if (error && row.runnerUnavailable === true) {
      level = 'error';
      messages.push(`${verb} of ${kernel}: no runner for it (${firstSentence(error)}). Set tritonlens.runners (local or remote) or run scripts/bootstrap.`);
      if (actions.length === 0) actions.push({ label: 'Open settings', command: 'workbench.action.openSettings', args: ['tritonlens.runners'] });
    } else if (error) {
      if (level !== 'error') level = 'warning';
      messages.push(`${verb} of ${kernel} failed: ${firstSentence(error, 300)}`);
    } else if (verb === 'Profile' && row.launches === 0) {
      if (level !== 'error') level = 'warning';
      messages.push(`Profile of ${kernel}: the harness launched it 0 times; check that the file's harness calls it.`);
    }
    const note = str(row.note);
    if (note) messages.push(note.charAt(0).toUpperCase() + note.slice(1) + '.');
  }
  const unique = [...new Set(messages)];
  return unique.length > 0 ? { level, message: unique.join(' '), actions } : undefined;
}

/**
 * The message a command's answer calls for, or undefined when the answer speaks for itself (results shown in
 * lenses, hovers and diagnostics). `canRecord`: the server offers tritonlens.recordLaunches.
 */
export function commandOutcome(command: string, args: unknown[], result: unknown, canRecord = false): Outcome | undefined {
  if (command === Commands.optimizeKernel) {
    if (!result || typeof result !== 'object') {
      return { level: 'error', message: 'Optimize returned nothing: see the tritonlens log.', actions: [{ label: 'Show log', command: Commands.showOutput, args: [] }] };
    }
    return optimizeOutcome(result as Record<string, unknown>, args, canRecord);
  }
  if (command === Commands.profileKernel || command === Commands.analyzeKernel) {
    const verb = command === Commands.profileKernel ? 'Profile' : 'Analyze';
    if (!Array.isArray(result)) {
      return result === undefined || result === null
        ? { level: 'error', message: `${verb} returned nothing: see the tritonlens log.`, actions: [{ label: 'Show log', command: Commands.showOutput, args: [] }] }
        : undefined;
    }
    if (result.length === 0) {
      return { level: 'warning', message: `${verb} found no Triton kernel to work on in ${fileOf(args[0])}.`, actions: [] };
    }
    return rowsOutcome(verb, result);
  }
  return undefined;
}
