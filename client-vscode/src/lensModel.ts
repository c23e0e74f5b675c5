// One concise code lens per kernel (issue 23: the server's per-feature lenses made a ~250-character row with
// "tritonlens:" in every part, Optimize off-screen). The headline action comes first and keeps its command; the
// other parts go into its tooltip (and the Kernels view's context menu). No vscode imports.

/** The features whose lens may head a kernel's row, best first (server/*_lsp.py `Feature.name`). */
export const HEADLINE_ORDER: readonly string[] = ['optimize', 'findings', 'profile', 'compile', 'record'];

export interface LensPart {
  feature: string; // from the lens's data.feature; '' when the server did not say
  title: string;
}

/** A title without the "tritonlens:" / "tritonlens profile (...)" lead-in the server gives each part. */
export function shortTitle(title: string): string {
  return title.replace(/^\s*tritonlens:\s*/i, '').replace(/^\s*tritonlens\s+/i, '').trim();
}

/** Index of the part that heads the row: the first feature of HEADLINE_ORDER present, else the first part. */
export function headlineIndex(features: readonly string[]): number {
  for (const wanted of HEADLINE_ORDER) {
    const i = features.indexOf(wanted);
    if (i >= 0) return i;
  }
  return 0;
}

/** "3 findings (2 warning, 1 info)" -> "3 findings"; "no findings" stays. */
function findingsShort(title: string): string {
  const m = /^(\d+ findings?)/.exec(title);
  return m ? m[1] : title;
}

/** "profile (H200): median 12.3 us, ..." -> "median 12.3 us"; nothing for a kernel not profiled yet. */
function profileShort(title: string): string | undefined {
  const m = /median ([\d.,]+ \w+)/.exec(title);
  return m ? m[1] : undefined;
}

/**
 * The row's one lens: "tritonlens: <headline> · <n findings> · <median>", at most about 60 characters before the
 * details, and a tooltip with every part's full text (one per line).
 */
export function combineLens(parts: readonly LensPart[]): { title: string; tooltip: string; headline: number } {
  const headline = headlineIndex(parts.map((p) => p.feature));
  const head = parts[headline];
  const extras: string[] = [];
  for (const [i, p] of parts.entries()) {
    if (i === headline) continue;
    const short = shortTitle(p.title);
    if (p.feature === 'findings') extras.push(findingsShort(short));
    else if (p.feature === 'profile') {
      const t = profileShort(short);
      if (t) extras.push(t);
    }
  }
  const title = ['tritonlens: ' + shortTitle(head?.title ?? ''), ...extras].join(' · ');
  const tooltip = parts
    .map((p, i) => `${i === headline ? 'Click: ' : ''}${shortTitle(p.title)}`)
    .concat('More actions: the Triton kernels view (right-click a kernel) and the lightbulb on each finding.')
    .join('\n');
  return { title, tooltip, headline };
}

/** Groups lenses by the kernel they sit on (their range start): one group per kernel, in the server's order. */
export function groupByPosition<T>(items: readonly T[], keyOf: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return [...groups.values()];
}
