import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { folderOf, KernelsTree, type KernelNode } from '../../src/kernelsTree';

const answer = [
  {
    uri: 'file:///ws/k.py',
    path: '/ws/k.py',
    name: 'softmax_kernel',
    line: 9,
    findings: [{ code: 'TL101', message: 'block size is a runtime argument', severity: 'error', level: 1, line: 9, col: 44 }],
    last_time_us: 42,
  },
];

describe('KernelsTree', () => {
  it('shows files, kernels with findings and times, and opens locations 0-based', async () => {
    let calls = 0;
    const tree = new KernelsTree(async () => {
      calls++;
      return answer;
    });
    await Promise.all([tree.refresh(), tree.refresh()]);
    expect(calls).toBe(2); // a refresh during an in-flight request asks once more after it (see below)
    const [file] = tree.getChildren();
    expect(file.kind).toBe('file');
    expect(tree.getTreeItem(file).description).toBe(''); // /ws/k.py is at the workspace root
    const [kernel] = tree.getChildren(file);
    const item = tree.getTreeItem(kernel);
    expect(item.label).toBe('softmax_kernel');
    expect(item.description).toBe('1 finding · last 42.0 µs');
    expect(item.command?.arguments).toEqual(['file:///ws/k.py', 8, 0]);
    const [finding] = tree.getChildren(kernel);
    const fItem = tree.getTreeItem(finding);
    expect(fItem.label).toBe('TL101 block size is a runtime argument');
    expect((fItem.iconPath as vscode.ThemeIcon).id).toBe('error');
    expect(fItem.command?.arguments).toEqual(['file:///ws/k.py', 8, 44]);
    expect(tree.getChildren(finding)).toEqual([]);
  });

  it('shows a message instead of failing when the server errors or finds nothing', async () => {
    const failing = new KernelsTree(async () => {
      throw new Error('server not running');
    });
    await failing.refresh();
    const [msg] = failing.getChildren() as Array<Extract<KernelNode, { kind: 'message' }>>;
    expect(msg).toEqual({ kind: 'message', text: 'Could not list kernels: server not running' });
    const empty = new KernelsTree(async () => []);
    await empty.refresh();
    expect(empty.getChildren()).toEqual([{ kind: 'message', text: 'No Triton kernels found in the workspace.' }]);
  });

  it('fires a change event after each refresh', async () => {
    const tree = new KernelsTree(async () => answer);
    let fired = 0;
    tree.onDidChangeTreeData(() => fired++);
    await tree.refresh();
    tree.setMessage('stopped');
    expect(fired).toBe(2);
    expect(tree.rows).toEqual([]);
  });
});

describe('folderOf', () => {
  it('keeps the folder of a relative path only', () => {
    expect(folderOf('kernels/attn/fwd.py')).toBe('kernels/attn');
    expect(folderOf('fwd.py')).toBe('');
  });
});

describe('KernelsTree refresh while a request is in flight', () => {
  it('asks once more after the in-flight answer, so a change during it is not lost', async () => {
    const answers: Array<(v: unknown) => void> = [];
    const tree = new KernelsTree(() => new Promise((resolve) => answers.push(resolve)));
    const first = tree.refresh();
    const second = tree.refresh(); // e.g. diagnostics published while the first request runs
    const third = tree.refresh(); // shares the follow-up request
    expect(answers.length).toBe(1);
    answers[0]({ kernels: [] }); // the answer predates the change
    await first;
    await new Promise((r) => setTimeout(r, 0));
    expect(answers.length).toBe(2);
    answers[1]({ kernels: [] });
    await Promise.all([second, third]);
    expect(answers.length).toBe(2);
    tree.dispose();
  });

  it('coalesces a burst of refreshSoon calls into one request', async () => {
    let asked = 0;
    const tree = new KernelsTree(async () => {
      asked += 1;
      return { kernels: [] };
    });
    for (let i = 0; i < 5; i++) tree.refreshSoon(5);
    await new Promise((r) => setTimeout(r, 30));
    expect(asked).toBe(1);
    tree.dispose();
  });
});
