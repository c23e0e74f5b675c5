import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { confirmMultiLine, spansMultipleLines, trustedCommands, trustHover, withConfirmation } from '../../src/evidence';

const uri = vscode.Uri.parse('file:///ws/k.py');

function edit(...parts: Array<[number, number, number, number, string]>): vscode.WorkspaceEdit {
  const e = new vscode.WorkspaceEdit();
  for (const [l1, c1, l2, c2, text] of parts) e.replace(uri, new vscode.Range(l1, c1, l2, c2), text);
  return e;
}

describe('hover trust', () => {
  it('enables only tritonlens command links', () => {
    expect(trustedCommands(['tritonlens.showIr', 'workbench.action.terminal.sendSequence', 'tritonlens.showIr', 'x'])).toEqual([
      'tritonlens.showIr',
    ]);
  });
  it('marks every Markdown part of a hover as trusted for those commands', () => {
    const md = new vscode.MarkdownString('[IR](command:tritonlens.showIr)');
    const hover = new vscode.Hover([md, 'plain']);
    trustHover(hover, ['tritonlens.showIr']);
    expect(md.isTrusted).toEqual({ enabledCommands: ['tritonlens.showIr'] });
  });
  it('passes a missing hover through', () => {
    expect(trustHover(undefined, [])).toBeUndefined();
    expect(trustHover(null, [])).toBeNull();
  });
});

describe('multi-line edits', () => {
  it('detects multi-line ranges, inserted lines and edits on several lines', () => {
    expect(spansMultipleLines(edit([3, 4, 3, 14, 'BLOCK: tl.constexpr']))).toBe(false);
    expect(spansMultipleLines(edit([3, 0, 5, 0, 'x']))).toBe(true);
    expect(spansMultipleLines(edit([3, 0, 3, 0, 'a\nb']))).toBe(true);
    expect(spansMultipleLines(edit([3, 0, 3, 1, 'a'], [3, 5, 3, 6, 'b']))).toBe(false);
    expect(spansMultipleLines(edit([3, 0, 3, 1, 'a'], [7, 0, 7, 1, 'b']))).toBe(true);
  });
  it('rebuilds the edit with needsConfirmation on every text edit', () => {
    const out = withConfirmation(edit([3, 0, 5, 0, 'x'], [9, 0, 9, 2, 'y']), 'Tile the loop');
    expect(out.entries()[0][1].map((e) => e.newText)).toEqual(['x', 'y']);
    expect((out as unknown as { metadata: vscode.WorkspaceEditEntryMetadata[] }).metadata.every((m) => m.needsConfirmation && m.label === 'Tile the loop')).toBe(true);
  });
  it('asks for a preview only for multi-line quick fixes', () => {
    const single = new vscode.CodeAction('Annotate');
    single.edit = edit([3, 4, 3, 14, 'BLOCK: tl.constexpr']);
    const before = single.edit;
    expect(confirmMultiLine(single).edit).toBe(before);
    const multi = new vscode.CodeAction('Rewrite');
    multi.edit = edit([3, 0, 6, 0, 'new body\n']);
    const meta = (confirmMultiLine(multi).edit as unknown as { metadata: Array<{ needsConfirmation: boolean }> }).metadata;
    expect(meta[0].needsConfirmation).toBe(true);
    const lazy = new vscode.CodeAction('Lazy'); // no edit yet: resolved later
    expect(confirmMultiLine(lazy).edit).toBeUndefined();
  });
  it('applies a verified rewrite in one step, however many lines it changes', () => {
    const verified = Object.assign(new vscode.CodeAction('Apply verified rewrite'), { data: { provider: 'optimize', id: 'c1' } });
    verified.edit = edit([3, 0, 9, 0, 'new body\n']);
    const before = verified.edit;
    expect(confirmMultiLine(verified).edit).toBe(before);
    expect((before as unknown as { metadata: unknown[] }).metadata).toEqual([undefined]);
  });
});
