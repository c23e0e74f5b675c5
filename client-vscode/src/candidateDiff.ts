// Diff view of a verified candidate against the current buffer: a read-only virtual document holds the
// candidate's text (from tritonlens/candidate) and vscode.diff shows it beside the file.
import * as vscode from 'vscode';
import { CANDIDATE_SCHEME } from './constants';
import { candidateDocPath, diffTitle, parseCandidate, parseCandidateQuery, type Candidate } from './candidateModel';

export type CandidateFetch = (uri: string, id: string) => Promise<unknown>;

export class CandidateDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly registration: vscode.Disposable;

  constructor(private readonly fetch: CandidateFetch) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(CANDIDATE_SCHEME, this);
  }

  /** Asks the server for the candidate; an error string when it has none (stale, unknown id, server down). */
  async load(uri: string, id: string): Promise<Candidate | { error: string }> {
    let raw: unknown;
    try {
      raw = await this.fetch(uri, id);
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
    const parsed = parseCandidate(raw);
    if (!('error' in parsed)) this.texts.set(this.key(uri, id), parsed.source);
    return parsed;
  }

  uriFor(uri: string, id: string): vscode.Uri {
    return vscode.Uri.from({ scheme: CANDIDATE_SCHEME, ...candidateDocPath(uri, id) });
  }

  provideTextDocumentContent(docUri: vscode.Uri): string {
    const q = parseCandidateQuery(docUri.query);
    const text = q && this.texts.get(this.key(q.uri, q.id));
    return text ?? '# tritonlens: this candidate is no longer held by the client; run Optimize kernel again.\n';
  }

  private key(uri: string, id: string): string {
    return `${uri}\n${id}`;
  }

  dispose(): void {
    this.registration.dispose();
    this.texts.clear();
  }
}

/** tritonlens.showCandidateDiff(uri, id): the current buffer on the left, the verified candidate on the right. */
export async function showCandidateDiff(docs: CandidateDocuments, uri: unknown, id: unknown): Promise<void> {
  if (typeof uri !== 'string' || typeof id !== 'string') {
    void vscode.window.showWarningMessage('tritonlens: Show rewrite diff needs a file and a candidate (use the hover or code lens).');
    return;
  }
  const candidate = await docs.load(uri, id);
  if ('error' in candidate) {
    void vscode.window.showWarningMessage(`tritonlens: cannot show the rewrite: ${candidate.error}`);
    return;
  }
  if (!candidate.current) {
    void vscode.window.showWarningMessage(
      'tritonlens: the file changed since this rewrite was verified; the diff is against the current text, run Optimize kernel again to verify it.',
    );
  }
  await vscode.commands.executeCommand('vscode.diff', vscode.Uri.parse(uri), docs.uriFor(uri, id), diffTitle(candidate));
}
