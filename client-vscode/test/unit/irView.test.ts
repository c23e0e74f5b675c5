import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { FakeEditor, recorded, window as mockWindow, workspace as mockWorkspace } from '../mocks/vscode';
import { parseIrQuery } from '../../src/irModel';
import { IrView, irUri } from '../../src/irView';

const SOURCE = 'file:///ws/k.py';
const IR = ['module {', '  %0 = tt.get_program_id x', '  %1 = tt.make_range', '  %2 = tt.splat', '  %3 = tt.load', '}'].join('\n');

describe('IrView', () => {
  let asked: unknown[];
  let view: IrView;
  beforeEach(() => {
    recorded.reset();
    asked = [];
    view = new IrView(async (query) => {
      asked.push(query);
      return { text: IR, lineMap: [[10, 2], [11, 3], [11, 4], [13, 5]], stages: ['ttir', 'ttgir', 'ptx'] };
    });
  });

  it('addresses a stage of a kernel by a tritonlens-ir URI that carries the query', () => {
    const uri = irUri({ uri: SOURCE, kernel: 'softmax_kernel', stage: 'ttgir', target: 'sm_90' });
    expect(uri.scheme).toBe('tritonlens-ir');
    expect(uri.path).toBe('/softmax_kernel.ttgir');
    expect(parseIrQuery(uri.query)).toEqual({ uri: SOURCE, kernel: 'softmax_kernel', stage: 'ttgir', target: 'sm_90' });
  });

  it('fetches the IR text and remembers the stages the server listed', async () => {
    const uri = irUri({ uri: SOURCE, kernel: 'softmax_kernel', stage: 'ttgir' });
    expect(await view.provideTextDocumentContent(uri as unknown as import('vscode').Uri)).toBe(IR);
    expect(asked).toEqual([{ uri: SOURCE, kernel: 'softmax_kernel', stage: 'ttgir', target: undefined }]);
    expect(view.knownStages(SOURCE, 'softmax_kernel')).toEqual(['ttir', 'ttgir', 'ptx']);
    expect(view.knownStages(SOURCE, 'other')).toBeUndefined();
  });

  it('opens beside the source without taking focus and highlights the IR of the cursor line', async () => {
    const editor = await view.show({ uri: SOURCE, kernel: 'softmax_kernel', stage: 'ttgir' }, 10); // 0-based line 10 = line 11
    const { options } = recorded.shown[0];
    expect(options).toMatchObject({ viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    const fake = editor as unknown as FakeEditor;
    expect(fake.decorations.map((r) => [r.start.line, r.end.line])).toEqual([[2, 3]]);
    expect(fake.revealed[0].start.line).toBe(2);
  });

  it('shows why instead of failing when the server has no IR', async () => {
    const failing = new IrView(async () => {
      throw new Error('Method Not Found: tritonlens/ir');
    });
    const text = await failing.provideTextDocumentContent(irUri({ uri: SOURCE, kernel: 'k', stage: 'sass' }) as unknown as import('vscode').Uri);
    expect(text).toContain('could not produce the sass of k');
    expect(text).toContain('Method Not Found');
    expect(text).toMatch(/\/\/ What to do: fix what the compiler says above and save/);
    const bad = await failing.provideTextDocumentContent(vscode.Uri.from({ scheme: 'tritonlens-ir', path: '/x', query: '{' }));
    expect(bad).toMatch(/malformed/);
  });
});

describe('IrView after a failed compile', () => {
  it('asks the server again for a stage that failed (VS Code would otherwise keep the failure text)', async () => {
    recorded.reset();
    let fail = true;
    const asked: unknown[] = [];
    const view = new IrView(async (query) => {
      asked.push(query);
      if (fail) throw new Error('add_kernel did not compile: line 7: unsupported op');
      return { text: 'module {}', lineMap: [], stages: ['ttir'] };
    });
    const query = { uri: SOURCE, kernel: 'add_kernel', stage: 'ttir' };
    const uri = irUri(query);
    const changed: string[] = [];
    view.onDidChange((u) => changed.push(u.toString()));
    expect(await view.provideTextDocumentContent(uri)).toMatch(/could not produce the ttir of add_kernel:\n\/\/ add_kernel did not compile: line 7/);
    fail = false;
    await view.show(query, 0);
    expect(changed).toEqual([uri.toString()]); // the cached failure is invalidated, so VS Code re-reads it
    expect(asked.length).toBe(2);
    expect(await view.provideTextDocumentContent(uri)).toBe('module {}');
    view.dispose();
  });
});

describe('IrView when the source changes (issue 23: stale IR kept highlighted)', () => {
  it('marks itself stale on an unsaved edit, stops highlighting, offers to recompile, and recompiles', async () => {
    recorded.reset();
    const source = { uri: vscode.Uri.parse(SOURCE), text: 'v1', getText() { return this.text; } };
    mockWorkspace.textDocuments.splice(0, mockWorkspace.textDocuments.length, source as never);
    let compiles = 0;
    const view = new IrView(async () => {
      compiles++;
      return { text: `module v${compiles}`, lineMap: [[1, 1]], stages: ['ttgir'] };
    });
    const query = { uri: SOURCE, kernel: 'k', stage: 'ttgir' };
    const uri = irUri(query);
    const changed: string[] = [];
    view.onDidChange((u) => changed.push(u.toString()));
    expect(await view.provideTextDocumentContent(uri)).toBe('module v1');
    const editor = (await view.show(query, 0)) as unknown as FakeEditor;
    expect(editor.decorations).toHaveLength(1);
    const before = compiles; // show() re-read the document once

    // An unsaved edit (or the file reloaded from disk): stale, told, no highlight of the old lines.
    source.text = 'v2';
    mockWindow.nextPick = 'Recompile';
    for (const l of mockWorkspace.changeListeners) l({ document: source as never });
    expect(view.isStale(uri)).toBe(true);
    expect(editor.decorations).toEqual([]);
    expect(recorded.messages.at(-1)?.text).toMatch(/ttgir of k is stale: its source changed/);
    expect(changed.at(-1)).toBe(uri.toString());
    // Until recompiled VS Code re-reads the old IR under a STALE header, without compiling.
    expect(await new Promise((r) => setTimeout(r, 0)).then(() => view.isStale(uri))).toBe(false); // "Recompile" was picked
    expect(await view.provideTextDocumentContent(uri)).toBe(`module v${before + 1}`);
    expect(compiles).toBe(before + 1);
    view.dispose();
  });

  it('shows the old IR under a STALE header until asked, and is fresh again after an undo', async () => {
    recorded.reset();
    const source = { uri: vscode.Uri.parse(SOURCE), text: 'v1', getText() { return this.text; } };
    mockWorkspace.textDocuments.splice(0, mockWorkspace.textDocuments.length, source as never);
    let compiles = 0;
    const view = new IrView(async () => ({ text: `module ${++compiles}`, lineMap: [], stages: [] }));
    const uri = irUri({ uri: SOURCE, kernel: 'k', stage: 'ttir' });
    await view.provideTextDocumentContent(uri);
    source.text = 'v1 edited';
    for (const l of mockWorkspace.changeListeners) l({ document: source as never }); // dismissed
    const text = await view.provideTextDocumentContent(uri);
    expect(text.split('\n')[0]).toMatch(/^\/\/ tritonlens: STALE - k's source changed since this ttir was compiled/);
    expect(text).toContain('module 1');
    expect(compiles).toBe(1);
    source.text = 'v1';
    for (const l of mockWorkspace.changeListeners) l({ document: source as never });
    expect(view.isStale(uri)).toBe(false);
    view.dispose();
  });
});
