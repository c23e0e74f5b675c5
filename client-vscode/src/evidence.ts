// How the client presents the server's evidence: trusted command links in hovers (tritonlens commands only) and
// refactor preview for quick fixes whose edits span more than one line.
import * as vscode from 'vscode';

/** Command ids a hover link may run: only tritonlens's own. */
export function trustedCommands(ids: Iterable<string>): string[] {
  return [...new Set([...ids].filter((id) => id.startsWith('tritonlens.')))].sort();
}

/** Lets the hover's Markdown run tritonlens command links (e.g. open the IR at a line) and nothing else. */
export function trustHover(hover: vscode.Hover | null | undefined, enabledCommands: string[]): vscode.Hover | null | undefined {
  if (!hover) return hover;
  for (const part of hover.contents) {
    if (part instanceof vscode.MarkdownString) part.isTrusted = { enabledCommands };
  }
  return hover;
}

/** True when applying the edit changes more than one line: a multi-line range, new lines, or edits on several lines. */
export function spansMultipleLines(edit: vscode.WorkspaceEdit): boolean {
  const touched = new Set<string>();
  for (const [uri, edits] of edit.entries()) {
    for (const e of edits) {
      if (e.range.start.line !== e.range.end.line || e.newText.includes('\n')) return true;
      touched.add(`${uri.toString()}#${e.range.start.line}`);
      if (touched.size > 1) return true;
    }
  }
  return false;
}

/** The same text edits, each marked as needing confirmation, so VS Code shows its refactor preview first. */
export function withConfirmation(edit: vscode.WorkspaceEdit, label: string): vscode.WorkspaceEdit {
  const out = new vscode.WorkspaceEdit();
  const metadata: vscode.WorkspaceEditEntryMetadata = {
    needsConfirmation: true,
    label,
    description: 'tritonlens rewrite: review before applying',
  };
  for (const [uri, edits] of edit.entries()) {
    for (const e of edits) out.replace(uri, e.range, e.newText, metadata);
  }
  return out;
}

/** A verified rewrite from Optimize (server/optimize_lsp.py code actions carry data.provider "optimize"). */
export function isVerifiedRewrite(action: vscode.CodeAction): boolean {
  return (action as { data?: { provider?: unknown } }).data?.provider === 'optimize';
}

/**
 * Marks a code action's multi-line edit for preview; single-line fixes apply directly, and so do verified
 * rewrites (issue 23: one step; VS Code's "Preview" in the action list still shows them, edits ticked).
 */
export function confirmMultiLine<T extends vscode.CodeAction | vscode.Command>(action: T): T {
  if (!(action instanceof vscode.CodeAction) || !action.edit || isVerifiedRewrite(action)) return action;
  if (spansMultipleLines(action.edit)) action.edit = withConfirmation(action.edit, action.title);
  return action;
}
