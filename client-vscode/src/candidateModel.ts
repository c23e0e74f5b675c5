// Pure decisions about verified rewrite candidates (tritonlens/candidate): what the server answered, the virtual
// document that holds a candidate's text, and what the diff view is titled. No vscode imports.

/** One verified candidate as the server returns it from tritonlens/candidate (server/optimize_lsp.py). */
export interface Candidate {
  uri: string;
  id: string;
  kernel: string;
  title: string;
  source: string;
  current: boolean; // false when the buffer changed since the candidate was verified
  speedup?: number;
  timed: boolean;
  origin?: string;
}

/** The server's answer, checked: a candidate, or the reason there is none (never a silent empty diff). */
export function parseCandidate(raw: unknown): Candidate | { error: string } {
  if (!raw || typeof raw !== 'object') return { error: 'the server returned no candidate' };
  const r = raw as Record<string, unknown>;
  if (typeof r.error === 'string') return { error: r.error };
  if (typeof r.source !== 'string' || typeof r.id !== 'string' || typeof r.uri !== 'string') {
    return { error: 'the server returned a candidate without its text' };
  }
  return {
    uri: r.uri,
    id: r.id,
    kernel: typeof r.kernel === 'string' ? r.kernel : '',
    title: typeof r.title === 'string' ? r.title : r.id,
    source: r.source,
    current: r.current !== false,
    speedup: typeof r.speedup === 'number' ? r.speedup : undefined,
    timed: r.timed === true,
    origin: typeof r.origin === 'string' ? r.origin : undefined,
  };
}

/** Path and query of the virtual document for a candidate: one per (file, candidate), named after the file. */
export function candidateDocPath(uri: string, id: string): { path: string; query: string } {
  const file = decodeURIComponent(uri.replace(/[?#].*$/, '').split('/').pop() || 'kernel.py');
  return { path: `/${id}/${file}`, query: JSON.stringify({ uri, id }) };
}

/** Reads back (uri, id) from a candidate document's query; undefined for anything else. */
export function parseCandidateQuery(query: string): { uri: string; id: string } | undefined {
  try {
    const q = JSON.parse(query) as { uri?: unknown; id?: unknown };
    return typeof q.uri === 'string' && typeof q.id === 'string' ? { uri: q.uri, id: q.id } : undefined;
  } catch {
    return undefined;
  }
}

/** "add_kernel: current ↔ verified rewrite (BLOCK 64 -> 256, 2.1x)" — says what is verified and whether timed. */
export function diffTitle(c: Candidate): string {
  const measured = c.timed && c.speedup ? `, ${c.speedup.toFixed(2)}x` : c.timed ? '' : ', verified correct, not timed';
  const llm = c.origin === 'llm' ? ', LLM-written' : '';
  return `${c.kernel || 'kernel'}: current ↔ verified rewrite (${c.title}${measured}${llm})`;
}

/** Offers of a tritonlens.optimizeKernel result, for the "show diff" choice after a run. */
export function offersOf(result: unknown): { id: string; label: string }[] {
  const offers = (result as { offers?: unknown } | undefined)?.offers;
  if (!Array.isArray(offers)) return [];
  return offers.flatMap((o) => {
    const r = o as Record<string, unknown>;
    if (typeof r?.id !== 'string') return [];
    const speed = r.timed === true && typeof r.speedup === 'number' ? ` (${r.speedup.toFixed(2)}x)` : ' (correct, not timed)';
    return [{ id: r.id, label: `${typeof r.title === 'string' ? r.title : r.id}${speed}` }];
  });
}

/**
 * Palette visibility of server commands: a context key per statically contributed server command, true only when
 * the running server advertises it, so the palette never offers a command no server implements.
 */
export function commandContextKeys(advertised: readonly string[], serverCommands: readonly string[]): Record<string, boolean> {
  const have = new Set(advertised);
  return Object.fromEntries(serverCommands.map((c) => [`${c}.offered`, have.has(c)]));
}

/** The verified rewrites of one Optimize run, for the document version they were verified against. */
export interface VerifiedOffers {
  version: number;
  byKernel: Map<string, { id: string; label: string }>; // the first (best-ranked) offer per kernel
}

/** Reads an Optimize answer into VerifiedOffers; undefined when it verified nothing or has no version. */
export function verifiedOffers(result: unknown): VerifiedOffers | undefined {
  const r = result as { version?: unknown; offers?: unknown } | undefined;
  if (typeof r?.version !== 'number' || !Array.isArray(r.offers)) return undefined;
  const labels = new Map(offersOf(result).map((o) => [o.id, o.label]));
  const byKernel = new Map<string, { id: string; label: string }>();
  for (const o of r.offers as Record<string, unknown>[]) {
    if (typeof o?.id !== 'string' || typeof o.kernel !== 'string' || byKernel.has(o.kernel)) continue;
    byKernel.set(o.kernel, { id: o.id, label: labels.get(o.id) ?? o.id });
  }
  return byKernel.size > 0 ? { version: r.version, byKernel } : undefined;
}

/** The offer whose diff the kernel's lens opens: only while the text is the one that was verified. */
export function diffOffer(
  offers: VerifiedOffers | undefined,
  documentVersion: number | undefined,
  kernel: unknown,
): { id: string; label: string } | undefined {
  if (!offers || documentVersion !== offers.version || typeof kernel !== 'string') return undefined;
  return offers.byKernel.get(kernel);
}
