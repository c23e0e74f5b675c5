// The `tritonlens/kernels` answer, read leniently and shaped for the tree view; no vscode imports.
// Lines from the server are 1-based (as findings count them); the editor's are 0-based.

export interface KernelFinding {
  code: string;
  message: string;
  severity: 'error' | 'warning' | 'info' | 'hint';
  level: number;
  line: number; // 1-based
  col: number; // 0-based
}

export interface KernelRow {
  uri: string;
  path: string;
  name: string;
  line: number; // 1-based line of the kernel's def
  findings: KernelFinding[];
  lastTimeUs?: number; // last measured median time, when the kernel has been profiled
  lastMeasuredAt?: string;
}

export interface FileGroup {
  uri: string;
  path: string;
  kernels: KernelRow[];
}

const SEVERITIES = new Set(['error', 'warning', 'info', 'hint']);

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function parseFinding(raw: unknown): KernelFinding | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  if (typeof r.code !== 'string' || typeof r.message !== 'string') return undefined;
  const severity = typeof r.severity === 'string' && SEVERITIES.has(r.severity) ? r.severity : 'warning';
  return {
    code: r.code,
    message: r.message,
    severity: severity as KernelFinding['severity'],
    level: num(r.level) ?? 1,
    line: num(r.line) ?? 1,
    col: num(r.col) ?? 0,
  };
}

/** Rows with the fields the view needs; anything malformed is skipped rather than breaking the view. */
export function parseKernels(raw: unknown): KernelRow[] {
  if (!Array.isArray(raw)) return [];
  const out: KernelRow[] = [];
  for (const item of raw) {
    if (!item || typeof item !== 'object') continue;
    const r = item as Record<string, unknown>;
    if (typeof r.uri !== 'string' || typeof r.name !== 'string') continue;
    const findings = Array.isArray(r.findings)
      ? r.findings.map(parseFinding).filter((f): f is KernelFinding => f !== undefined)
      : [];
    out.push({
      uri: r.uri,
      path: typeof r.path === 'string' ? r.path : r.uri,
      name: r.name,
      line: num(r.line) ?? 1,
      findings,
      lastTimeUs: num(r.last_time_us) ?? num(r.lastTimeUs),
      lastMeasuredAt:
        typeof r.last_measured_at === 'string'
          ? r.last_measured_at
          : typeof r.lastMeasuredAt === 'string'
            ? r.lastMeasuredAt
            : undefined,
    });
  }
  return out;
}

/** Files in path order, kernels in line order within each. */
export function groupByFile(rows: KernelRow[]): FileGroup[] {
  const groups = new Map<string, FileGroup>();
  for (const row of rows) {
    let group = groups.get(row.uri);
    if (!group) {
      group = { uri: row.uri, path: row.path, kernels: [] };
      groups.set(row.uri, group);
    }
    group.kernels.push(row);
  }
  const out = [...groups.values()].sort((a, b) => a.path.localeCompare(b.path));
  for (const g of out) g.kernels.sort((a, b) => a.line - b.line || a.name.localeCompare(b.name));
  return out;
}

/** The kernel whose def is the last one at or above `line0` (0-based editor line) in `uri`. */
export function kernelAt(rows: KernelRow[], uri: string, line0: number): KernelRow | undefined {
  let best: KernelRow | undefined;
  for (const row of rows) {
    if (row.uri !== uri || row.line - 1 > line0) continue;
    if (!best || row.line > best.line) best = row;
  }
  return best ?? rows.find((r) => r.uri === uri);
}

export function formatTime(us: number): string {
  if (us >= 1000) return `${(us / 1000).toFixed(us >= 10000 ? 1 : 2)} ms`;
  return `${us.toFixed(us >= 100 ? 0 : 1)} µs`;
}

/** One line under the kernel's name: how many findings, worst first, and the last measured time. */
export function kernelDescription(row: KernelRow): string {
  const parts: string[] = [];
  const n = row.findings.length;
  parts.push(n === 0 ? 'no findings' : `${n} finding${n === 1 ? '' : 's'}`);
  if (row.lastTimeUs !== undefined) parts.push(`last ${formatTime(row.lastTimeUs)}`);
  return parts.join(' · ');
}

export function findingLabel(f: KernelFinding): string {
  return `${f.code} ${f.message}`;
}
