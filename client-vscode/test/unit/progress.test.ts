import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { recorded } from '../mocks/vscode';
import { ActivityTracker } from '../../src/activity';
import { ProgressCoordinator, workDoneMiddleware, type ProgressClient } from '../../src/progress';
import { renderStatus } from '../../src/statusModel';

type Handler = (value: { kind: string; title?: string; message?: string; percentage?: number }) => void;

/** Records what the coordinator sends and lets a test play the server's side. */
class FakeClient {
  /** Wraps every progress handler as vscode-languageclient does with `middleware.handleWorkDoneProgress`. */
  middleware: ((token: string, value: Parameters<Handler>[0], next: (t: string, v: Parameters<Handler>[0]) => void) => void) | undefined;
  createHandler: ((p: { token: string }) => void) | undefined;
  progress = new Map<string, Handler>();
  notifications: Array<{ method: string; params: unknown }> = [];
  requests: Array<{ params: { command: string; arguments?: unknown[]; workDoneToken?: string }; token?: { onCancellationRequested(l: () => void): unknown } }> = [];
  private answer: ((v: unknown) => void) | undefined;
  private fail: ((e: Error) => void) | undefined;

  onRequest(_t: unknown, handler: (p: { token: string }) => void) {
    this.createHandler = handler;
    return new vscode.Disposable(() => undefined);
  }
  onProgress(_t: unknown, token: string, handler: Handler) {
    if (this.progress.has(token)) throw new Error(`progress handler for ${token} already registered`);
    const real: Handler = (value) => (this.middleware ? this.middleware(token, value, (_t, v) => handler(v)) : handler(value));
    this.progress.set(token, real);
    return new vscode.Disposable(() => this.progress.delete(token));
  }
  sendNotification(t: { method: string }, params: unknown) {
    this.notifications.push({ method: t.method, params });
    return Promise.resolve();
  }
  sendRequest(_t: unknown, params: FakeClient['requests'][0]['params'], token?: FakeClient['requests'][0]['token']) {
    this.requests.push({ params, token });
    token?.onCancellationRequested(() => this.fail?.(new Error('Request cancelled')));
    return new Promise((resolve, reject) => {
      this.answer = resolve;
      this.fail = reject;
    });
  }
  reply(value: unknown) {
    this.answer?.(value);
  }
  emit(token: string, value: Parameters<Handler>[0]) {
    const h = this.progress.get(token);
    if (!h) throw new Error(`no progress handler for ${token}`);
    h(value);
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('ProgressCoordinator', () => {
  let client: FakeClient;
  let tracker: ActivityTracker;
  let coordinator: ProgressCoordinator;
  beforeEach(() => {
    recorded.reset();
    client = new FakeClient();
    tracker = new ActivityTracker();
    coordinator = new ProgressCoordinator(client as unknown as ProgressClient, tracker);
    coordinator.install();
  });

  it('titles server work with the tritonlens prefix once, whether or not the server added it', async () => {
    client.createHandler!({ token: 'srv-p' });
    client.emit('srv-p', { kind: 'begin', title: 'tritonlens: compiling for sm_90' });
    await tick();
    expect((recorded.progress[0].options as { title?: string }).title).toBe('tritonlens: compiling for sm_90');
    client.emit('srv-p', { kind: 'end' });
    await tick();
  });

  it('shows server-created work in the window and drives the activity', async () => {
    client.createHandler!({ token: 'srv-1' });
    client.emit('srv-1', { kind: 'begin', title: 'Compiling softmax (sm_90)' });
    await tick();
    expect(tracker.activity).toBe('analyzing');
    expect(recorded.progress[0].options.location).toBe(vscode.ProgressLocation.Window);
    expect((recorded.progress[0].options as { title?: string }).title).toBe('tritonlens: Compiling softmax (sm_90)');
    client.emit('srv-1', { kind: 'report', message: 'ttgir' });
    expect(recorded.progress[0].reports).toContainEqual({ message: 'ttgir' });
    client.emit('srv-1', { kind: 'end' });
    await tick();
    expect(tracker.activity).toBe('idle');
    expect(recorded.progress[0].done).toBe(true);
    expect(client.progress.has('srv-1')).toBe(false);
  });

  it('runs a long command with a work-done token, a cancellable notification and percentage increments', async () => {
    const done = coordinator.runCommand('tritonlens.profileKernel', ['file:///k.py', 'softmax'], 'Profiling softmax');
    await tick();
    const req = client.requests[0].params;
    expect(req.command).toBe('tritonlens.profileKernel');
    expect(req.arguments).toEqual(['file:///k.py', 'softmax']);
    const token = req.workDoneToken!;
    expect(token).toBeTruthy();
    expect(recorded.progress[0].options).toMatchObject({ location: vscode.ProgressLocation.Notification, cancellable: true });
    expect(tracker.activity).toBe('profiling');
    client.emit(token, { kind: 'begin', title: 'Profiling', percentage: 0 });
    client.emit(token, { kind: 'report', message: 'run 5/10', percentage: 50 });
    client.emit(token, { kind: 'report', message: 'run 8/10', percentage: 80 });
    expect(recorded.progress[0].reports.map((r) => r.increment)).toEqual([undefined, 50, 30]);
    client.reply({ ok: true });
    await expect(done).resolves.toEqual({ ok: true });
    expect(tracker.activity).toBe('idle');
    expect(client.progress.size).toBe(0);
  });

  it('moves the notification with the elapsed time while the server says nothing new (issue 23: text frozen)', async () => {
    vi.useFakeTimers();
    try {
      const done = coordinator.runCommand('tritonlens.profileKernel', ['u', 'k'], 'Profiling k');
      await vi.advanceTimersByTimeAsync(0);
      const token = client.requests[0].params.workDoneToken!;
      client.emit(token, { kind: 'report', message: 'running the kernelbench harness on local cuda (interpret)', percentage: 15 });
      await vi.advanceTimersByTimeAsync(3000);
      const messages = recorded.progress[0].reports.map((r) => r.message);
      expect(messages[0]).toBe('running the kernelbench harness on local cuda (interpret)');
      expect(messages.at(-1)).toBe('running the kernelbench harness on local cuda (interpret) · 3s');
      await vi.advanceTimersByTimeAsync(62000);
      expect(recorded.progress[0].reports.at(-1)?.message).toBe('running the kernelbench harness on local cuda (interpret) · 1m 05s');
      client.reply([]);
      await done;
      const count = recorded.progress[0].reports.length;
      await vi.advanceTimersByTimeAsync(5000);
      expect(recorded.progress[0].reports.length).toBe(count); // the clock stops with the command
    } finally {
      vi.useRealTimers();
    }
  });

  it('folds server-created progress into the running command and cancels both on cancel', async () => {
    const done = coordinator.runCommand('tritonlens.profileKernel', ['u', 'k'], 'Profiling k');
    await tick();
    const clientToken = client.requests[0].params.workDoneToken!;
    client.createHandler!({ token: 'srv-9' });
    client.emit('srv-9', { kind: 'begin', title: 'Measuring on local cuda', message: 'warmup' });
    expect(recorded.progress).toHaveLength(1); // no second progress UI
    expect(recorded.progress[0].reports).toContainEqual({ message: 'warmup', increment: undefined });
    recorded.progress[0].cancel.cancel();
    await expect(done).rejects.toThrow(/cancel/);
    const cancelled = client.notifications.filter((n) => n.method === 'window/workDoneProgress/cancel').map((n) => (n.params as { token: string }).token);
    expect(cancelled.sort()).toEqual([clientToken, 'srv-9'].sort());
  });

  it('keeps the status busy for work the language client shows itself (begun before install, or after a restart)', async () => {
    client.middleware = workDoneMiddleware(tracker, () => coordinator) as FakeClient['middleware'];
    // vscode-languageclient's own progress part owns this token: the coordinator never sees its create request.
    const part: Array<string | undefined> = [];
    client.onProgress(undefined, 'lc-1', (v) => part.push(v.kind));
    const status = () => renderStatus({ server: 'running', activity: tracker.activity, current: tracker.current, runners: [] });
    expect(status().text).toContain('idle');
    client.emit('lc-1', { kind: 'begin', title: 'tritonlens: re-reading the workspace' });
    expect(status().text).toContain('tritonlens: analyzing');
    expect(status().tooltip).toContain('analyzing: re-reading the workspace');
    client.emit('lc-1', { kind: 'report', message: '3/10 files' });
    expect(status().tooltip).toContain('re-reading the workspace - 3/10 files');
    client.emit('lc-1', { kind: 'end' });
    expect(status().text).toContain('idle');
    expect(part).toEqual(['begin', 'report', 'end']); // the client's own display still gets every report
  });

  it('counts work the coordinator shows once, with its command, whether or not the middleware also sees it', async () => {
    client.middleware = workDoneMiddleware(tracker, () => coordinator) as FakeClient['middleware'];
    const done = coordinator.runCommand('tritonlens.profileKernel', ['u', 'k'], 'tritonlens: Profiling k');
    await tick();
    client.createHandler!({ token: 'srv-m' });
    client.emit('srv-m', { kind: 'begin', title: 'tritonlens: compiling for sm_90' });
    expect(tracker.entry('srv-m')?.command).toBe('tritonlens.profileKernel');
    expect(tracker.activity).toBe('profiling');
    client.emit('srv-m', { kind: 'end' });
    client.reply(null);
    await done;
    expect(tracker.activity).toBe('idle');
  });

  it("says a command's server work under the notification's title without a second prefix", async () => {
    const done = coordinator.runCommand('tritonlens.analyzeKernel', ['u', 'softmax'], 'tritonlens: Analyzing softmax');
    await tick();
    client.createHandler!({ token: 'srv-a' });
    client.emit('srv-a', { kind: 'begin', title: 'tritonlens: compiling for sm_90' });
    client.emit('srv-a', { kind: 'report', message: 'softmax (1/1)' });
    const messages = recorded.progress[0].reports.map((r) => r.message);
    expect(messages).toEqual(['compiling for sm_90', 'softmax (1/1)']);
    expect(recorded.progress[0].options.title).toBe('tritonlens: Analyzing softmax');
    client.emit('srv-a', { kind: 'end' });
    client.reply(null);
    await done;
  });
});
