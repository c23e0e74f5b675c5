// The side-by-side IR view's pure parts: virtual document addresses, the `tritonlens/ir` answer and the
// source-line -> IR-lines lookup. Lines in the server's lineMap are 1-based; ranges returned here are 0-based.
import { DEFAULT_STAGES } from './constants';

export interface IrQuery {
  uri: string; // the kernel's source document
  kernel: string;
  stage: string;
  target?: string; // e.g. sm_90; the server's irTarget setting when absent
}

export interface IrResult {
  text: string;
  stage?: string; // the stage the server actually returned (it may fall back when the asked one is missing)
  lineMap: Array<[number, number]>; // [source line, IR line], both 1-based
  stages: string[];
}

export interface LineRange {
  start: number; // 0-based, inclusive
  end: number; // 0-based, inclusive
}

const SAFE_NAME = /[^A-Za-z0-9_.-]/g;

/** Path and query of the virtual document showing one stage of one kernel; the path gives the tab its title. */
export function irDocumentAddress(q: IrQuery): { path: string; query: string } {
  const name = `${q.kernel}.${q.stage}`.replace(SAFE_NAME, '_');
  return { path: `/${name}`, query: JSON.stringify(q) };
}

export function parseIrQuery(query: string): IrQuery | undefined {
  try {
    const raw = JSON.parse(query) as Record<string, unknown>;
    if (typeof raw.uri !== 'string' || typeof raw.kernel !== 'string' || typeof raw.stage !== 'string') return undefined;
    return {
      uri: raw.uri,
      kernel: raw.kernel,
      stage: raw.stage,
      target: typeof raw.target === 'string' ? raw.target : undefined,
    };
  } catch {
    return undefined;
  }
}

/** Reads the server's answer; a malformed one throws with a message that says what was wrong. */
export function parseIrResult(raw: unknown): IrResult {
  if (!raw || typeof raw !== 'object') throw new Error('tritonlens/ir returned no result');
  const r = raw as Record<string, unknown>;
  // The server answers {error, stages} when the kernel could not be compiled (no runner, compile error...).
  if (typeof r.error === 'string' && r.error && !r.text) throw new Error(r.error);
  if (typeof r.text !== 'string') throw new Error('tritonlens/ir result has no text');
  const lineMap: Array<[number, number]> = [];
  if (Array.isArray(r.lineMap)) {
    for (const pair of r.lineMap) {
      if (Array.isArray(pair) && pair.length >= 2 && Number.isInteger(pair[0]) && Number.isInteger(pair[1])) {
        lineMap.push([pair[0], pair[1]]);
      }
    }
  }
  const stages = Array.isArray(r.stages) ? r.stages.filter((s): s is string => typeof s === 'string') : [];
  return { text: r.text, stage: typeof r.stage === 'string' ? r.stage : undefined, lineMap, stages };
}

/** Stages to offer before the server has listed them: by the platform of the IR target. */
export function defaultStages(irTarget: string | undefined): readonly string[] {
  return irTarget?.startsWith('ascend') ? DEFAULT_STAGES.ascend : DEFAULT_STAGES.cuda;
}

/** Merges sorted 0-based line numbers into runs, so one decoration covers each block of IR. */
export function toRanges(lines0: number[]): LineRange[] {
  const sorted = [...new Set(lines0)].sort((a, b) => a - b);
  const out: LineRange[] = [];
  for (const line of sorted) {
    const last = out[out.length - 1];
    if (last && line === last.end + 1) last.end = line;
    else out.push({ start: line, end: line });
  }
  return out;
}

/** IR lines (as 0-based ranges) attributed to the 0-based source line `srcLine0`. */
export function irRangesForSourceLine(lineMap: Array<[number, number]>, srcLine0: number): LineRange[] {
  return toRanges(lineMap.filter(([src]) => src === srcLine0 + 1).map(([, ir]) => ir - 1));
}

/** Source lines (0-based) that produced the 0-based IR line `irLine0`: for following the cursor back. */
export function sourceLinesForIrLine(lineMap: Array<[number, number]>, irLine0: number): number[] {
  return [...new Set(lineMap.filter(([, ir]) => ir === irLine0 + 1).map(([src]) => src - 1))].sort((a, b) => a - b);
}

/** The first line of an IR view whose source changed since it was compiled (the old IR stays below it). */
export function staleHeader(q: IrQuery): string {
  return `// tritonlens: STALE - ${q.kernel}'s source changed since this ${q.stage} was compiled; run "Recompile" (or save) for the current IR.\n`;
}
