import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { recorded, Uri } from '../mocks/vscode';
import { CandidateDocuments, showCandidateDiff } from '../../src/candidateDiff';
import { commandContextKeys, diffTitle, offersOf, parseCandidate } from '../../src/candidateModel';
import { Commands, SERVER_COMMANDS } from '../../src/constants';

const FILE = 'file:///ws/add%20k.py';
const ANSWER = {
  id: 'c1', uri: FILE, kernel: 'add_kernel', title: 'BLOCK_SIZE 64 -> 256', origin: 'config', speedup: 2.5,
  timed: true, current: true, source: 'import triton\n# rewritten\n', diff: '--- a\n+++ b\n',
};

describe('candidate model', () => {
  it('keeps the text and says what was verified in the diff title', () => {
    const c = parseCandidate(ANSWER);
    expect('error' in c).toBe(false);
    if ('error' in c) return;
    expect(c.source).toBe(ANSWER.source);
    expect(diffTitle(c)).toBe('add_kernel: current ↔ verified rewrite (BLOCK_SIZE 64 -> 256, 2.50x)');
    expect(diffTitle({ ...c, timed: false, speedup: undefined, origin: 'llm' })).toContain('verified correct, not timed, LLM-written');
  });

  it('turns a server error or a malformed answer into a reason', () => {
    expect(parseCandidate({ error: 'no verified candidate c9' })).toEqual({ error: 'no verified candidate c9' });
    expect(parseCandidate({ id: 'c1', uri: FILE })).toEqual({ error: 'the server returned a candidate without its text' });
    expect(parseCandidate(null)).toEqual({ error: 'the server returned no candidate' });
  });

  it('lists the offers of an optimize result, timed or not', () => {
    const result = { offers: [{ id: 'a', title: 'x', timed: true, speedup: 3 }, { id: 'b', title: 'y', timed: false }, { bad: 1 }] };
    expect(offersOf(result)).toEqual([{ id: 'a', label: 'x (3.00x)' }, { id: 'b', label: 'y (correct, not timed)' }]);
    expect(offersOf(undefined)).toEqual([]);
  });

  it('offers a server command in the palette only when the server advertises it', () => {
    expect(commandContextKeys([Commands.analyzeKernel], SERVER_COMMANDS)).toEqual({
      'tritonlens.analyzeKernel.offered': true,
      'tritonlens.profileKernel.offered': false,
      'tritonlens.optimizeKernel.offered': false,
    });
    expect(commandContextKeys([Commands.optimizeKernel], SERVER_COMMANDS)['tritonlens.optimizeKernel.offered']).toBe(true);
  });
});

describe('candidate diff view', () => {
  let asked: Array<[string, string]>;
  let answer: unknown;
  let docs: CandidateDocuments;
  let exec: ReturnType<typeof vi.fn>;
  beforeEach(() => {
    recorded.reset();
    asked = [];
    answer = ANSWER;
    docs?.dispose();
    docs = new CandidateDocuments(async (uri, id) => {
      asked.push([uri, id]);
      if (answer instanceof Error) throw answer;
      return answer;
    });
    exec = vi.spyOn(vscode.commands, 'executeCommand').mockResolvedValue(undefined) as unknown as ReturnType<typeof vi.fn>;
  });

  it('opens vscode.diff of the buffer against a virtual document holding the candidate', async () => {
    await showCandidateDiff(docs, FILE, 'c1');
    expect(asked).toEqual([[FILE, 'c1']]);
    expect(exec).toHaveBeenCalledTimes(1);
    const [command, left, right, title] = exec.mock.calls[0] as [string, Uri, Uri, string];
    expect(command).toBe('vscode.diff');
    expect(left.toString()).toBe(vscode.Uri.parse(FILE).toString());
    expect(right.scheme).toBe('tritonlens-candidate');
    expect(right.path).toBe('/c1/add k.py');
    expect(title).toContain('2.50x');
    const opened = await vscode.workspace.openTextDocument(right as unknown as vscode.Uri);
    expect((opened as unknown as { text: string }).text).toBe(ANSWER.source);
    expect(recorded.messages).toEqual([]);
  });

  it('warns, and still shows the diff, when the buffer changed since verification', async () => {
    answer = { ...ANSWER, current: false };
    await showCandidateDiff(docs, FILE, 'c1');
    expect(exec).toHaveBeenCalledTimes(1);
    expect(recorded.messages[0].text).toMatch(/changed since this rewrite was verified/);
  });

  it('shows the reason and no diff when the server has no such candidate or is down', async () => {
    answer = { error: 'no verified candidate c1 for file (run tritonlens.optimizeKernel first)' };
    await showCandidateDiff(docs, FILE, 'c1');
    answer = new Error('the tritonlens server is not running');
    await showCandidateDiff(docs, FILE, 'c1');
    await showCandidateDiff(docs, 42, undefined);
    expect(exec).not.toHaveBeenCalled();
    expect(recorded.messages.map((m) => m.text)).toEqual([
      'tritonlens: cannot show the rewrite: no verified candidate c1 for file (run tritonlens.optimizeKernel first)',
      'tritonlens: cannot show the rewrite: the tritonlens server is not running',
      'tritonlens: Show rewrite diff needs a file and a candidate (use the hover or code lens).',
    ]);
  });
});

describe('the Diff of a verified rewrite stays reachable until the text changes (issue 23)', () => {
  const result = {
    uri: 'file:///w/row_sum.py',
    version: 4,
    offers: [
      { id: 'c2', kernel: 'row_sum_kernel', title: 'vector accumulator', timed: false },
      { id: 'c3', kernel: 'row_sum_kernel', title: 'BLOCK 64 -> 256', timed: false },
    ],
  };
  it('opens the best offer of the kernel for the verified version only', async () => {
    const { verifiedOffers, diffOffer } = await import('../../src/candidateModel');
    const offers = verifiedOffers(result);
    expect(diffOffer(offers, 4, 'row_sum_kernel')).toEqual({ id: 'c2', label: 'vector accumulator (correct, not timed)' });
    expect(diffOffer(offers, 5, 'row_sum_kernel')).toBeUndefined(); // the buffer changed: back to Optimize
    expect(diffOffer(offers, 4, 'other_kernel')).toBeUndefined();
    expect(verifiedOffers({ version: 4, offers: [] })).toBeUndefined();
  });
});
