// "Show IR": a read-only virtual document (scheme tritonlens-ir) with one compiler stage of one kernel, opened
// beside the source; the IR lines of the source line under the cursor are highlighted and follow the cursor.
import * as vscode from 'vscode';
import { IR_SCHEME } from './constants';
import {
  irDocumentAddress,
  irRangesForSourceLine,
  parseIrQuery,
  parseIrResult,
  staleHeader,
  type IrQuery,
  type IrResult,
} from './irModel';

export type IrFetcher = (query: IrQuery) => Promise<unknown>;

export function irUri(query: IrQuery): vscode.Uri {
  const { path, query: q } = irDocumentAddress(query);
  return vscode.Uri.from({ scheme: IR_SCHEME, path, query: q });
}

export class IrView implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly results = new Map<string, IrResult>(); // IR document uri -> last answer
  // Every IR document VS Code holds text for, failed ones included: VS Code caches a provider's text, so showing
  // a stage again must fire onDidChange or a failed "could not produce" would stay without asking the server.
  private readonly provided = new Set<string>();
  // The source text each IR document was compiled from, and the IR documents whose source has changed since.
  private readonly compiledFrom = new Map<string, string>();
  private readonly stale = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly highlight = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.findMatchForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Center,
  });

  constructor(private readonly fetch: IrFetcher) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(IR_SCHEME, this),
      vscode.window.onDidChangeTextEditorSelection((e) => this.follow(e.textEditor)),
      vscode.window.onDidChangeVisibleTextEditors(() => {
        const active = vscode.window.activeTextEditor;
        if (active) this.follow(active);
      }),
      // A saved source may compile differently: refresh the IR shown for it.
      vscode.workspace.onDidSaveTextDocument((doc) => this.refreshFor(doc.uri.toString())),
      // An unsaved edit, or the file changed on disk (VS Code reloads the document): the IR shown is stale.
      vscode.workspace.onDidChangeTextDocument((e) => this.sourceChanged(e.document)),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = parseIrQuery(uri.query);
    if (!query) return '// tritonlens: this IR view address is malformed; run "tritonlens: Show IR" again.';
    const key = uri.toString();
    this.provided.add(key);
    const cached = this.results.get(key);
    if (this.stale.has(key) && cached) return staleHeader(query) + cached.text; // no recompile until asked
    const sourceText = this.sourceText(query.uri);
    try {
      const result = parseIrResult(await this.fetch(query));
      this.results.set(key, result);
      this.stale.delete(key);
      if (sourceText === undefined) this.compiledFrom.delete(key);
      else this.compiledFrom.set(key, sourceText);
      if (result.stage && result.stage !== query.stage) {
        void vscode.window.showWarningMessage(
          `tritonlens: ${query.kernel} has no ${query.stage} stage; showing ${result.stage} (stages: ${result.stages.join(', ')}).`,
        );
      }
      return result.text;
    } catch (err) {
      this.results.delete(uri.toString());
      const message = err instanceof Error ? err.message : String(err);
      const todo = /not set up|runner|environment/i.test(message)
        ? 'set "tritonlens.runners": {"local": {...}} to a Python with Triton, or run scripts/bootstrap in the tritonlens checkout'
        : /changed/i.test(message)
          ? 'run "tritonlens: Show IR" again'
          : 'fix what the compiler says above and save (the view recompiles), or see "tritonlens: Show log"';
      return `// tritonlens could not produce the ${query.stage} of ${query.kernel}:\n// ${message.replace(/\n/g, '\n// ')}\n// What to do: ${todo}.\n`;
    }
  }

  /** True while the IR document's source differs from the text it was compiled from. */
  isStale(irUri: vscode.Uri): boolean {
    return this.stale.has(irUri.toString());
  }

  private sourceText(sourceUri: string): string | undefined {
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === sourceUri)?.getText();
  }

  /** Marks the IR of a changed source stale (or fresh again after an undo) and offers to recompile it. */
  private sourceChanged(doc: vscode.TextDocument): void {
    if (doc.uri.scheme === IR_SCHEME) return;
    const source = doc.uri.toString();
    const text = doc.getText();
    for (const key of this.provided) {
      const query = parseIrQuery(vscode.Uri.parse(key).query);
      const from = this.compiledFrom.get(key);
      if (query?.uri !== source || from === undefined) continue;
      const nowStale = text !== from;
      if (nowStale === this.stale.has(key)) continue;
      const irDoc = vscode.Uri.parse(key);
      if (nowStale) this.stale.add(key);
      else this.stale.delete(key);
      for (const ir of vscode.window.visibleTextEditors) {
        if (ir.document.uri.toString() === key) ir.setDecorations(this.highlight, []); // old lines: no highlight
      }
      this.changed.fire(irDoc); // re-read: the STALE header appears, or goes after an undo
      if (nowStale) void this.offerRecompile(irDoc, query);
    }
  }

  private async offerRecompile(irDoc: vscode.Uri, query: IrQuery): Promise<void> {
    const pick = await vscode.window.showWarningMessage(
      `tritonlens: the ${query.stage} of ${query.kernel} is stale: its source changed since it was compiled.`,
      'Recompile',
    );
    if (pick === 'Recompile') await this.recompile(irDoc);
  }

  /** Compiles the current text again for a stale IR document. */
  async recompile(irDoc: vscode.Uri): Promise<void> {
    const key = irDoc.toString();
    this.stale.delete(key);
    this.results.delete(key);
    this.changed.fire(irDoc);
  }

  /** The stages the server said it has for this kernel, once one stage has been shown. */
  knownStages(sourceUri: string, kernel: string): string[] | undefined {
    for (const [key, result] of this.results) {
      const q = parseIrQuery(vscode.Uri.parse(key).query);
      if (q && q.uri === sourceUri && q.kernel === kernel && result.stages.length > 0) return result.stages;
    }
    return undefined;
  }

  /** Opens (or re-fetches) the stage beside the source and highlights the IR of `line0` (the cursor's line). */
  async show(query: IrQuery, line0?: number): Promise<vscode.TextEditor> {
    const uri = irUri(query);
    if (this.provided.has(uri.toString())) this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    const irEditor = await vscode.window.showTextDocument(doc, {
      viewColumn: vscode.ViewColumn.Beside,
      preserveFocus: true,
      preview: false,
    });
    const source = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === query.uri);
    const line = line0 ?? source?.selection.active.line;
    if (line !== undefined) this.decorate(irEditor, line, true);
    return irEditor;
  }

  private refreshFor(sourceUri: string): void {
    for (const key of this.provided) {
      const uri = vscode.Uri.parse(key);
      if (parseIrQuery(uri.query)?.uri !== sourceUri) continue;
      this.stale.delete(key); // saved: compile the saved text
      this.changed.fire(uri);
    }
  }

  /** When the cursor moves in a source editor, update every visible IR view of that source. */
  private follow(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme === IR_SCHEME) return;
    const source = editor.document.uri.toString();
    for (const ir of vscode.window.visibleTextEditors) {
      if (ir.document.uri.scheme !== IR_SCHEME) continue;
      if (parseIrQuery(ir.document.uri.query)?.uri !== source) continue;
      this.decorate(ir, editor.selection.active.line, true);
    }
  }

  private decorate(irEditor: vscode.TextEditor, sourceLine0: number, reveal: boolean): void {
    const result = this.results.get(irEditor.document.uri.toString());
    if (!result || this.stale.has(irEditor.document.uri.toString())) return; // stale lines would mislead
    const ranges = irRangesForSourceLine(result.lineMap, sourceLine0).map(
      (r) => new vscode.Range(r.start, 0, r.end, Number.MAX_SAFE_INTEGER),
    );
    irEditor.setDecorations(this.highlight, ranges);
    if (reveal && ranges.length > 0) irEditor.revealRange(ranges[0], vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.highlight.dispose();
    this.changed.dispose();
  }
}
