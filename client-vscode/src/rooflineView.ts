// The roofline chart beside the editor after profiling (and on "tritonlens: Show roofline"): one webview panel,
// refreshed for the file it shows.
import * as vscode from 'vscode';
import { parseRoofline, rooflineHtml } from './rooflineModel';

export type RooflineFetch = (uri: string) => Promise<unknown>;

export class RooflineView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;

  constructor(private readonly fetch: RooflineFetch) {}

  async show(uri: string): Promise<void> {
    let raw: unknown;
    try {
      raw = await this.fetch(uri);
    } catch (err) {
      raw = { why: err instanceof Error ? err.message : String(err) };
    }
    const file = decodeURIComponent(uri.split('/').pop() ?? uri);
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        'tritonlens.roofline',
        `Roofline: ${file}`,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: false },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
    }
    this.panel.title = `Roofline: ${file}`;
    this.panel.webview.html = rooflineHtml(parseRoofline(raw), file);
    this.panel.reveal(vscode.ViewColumn.Beside, true);
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
