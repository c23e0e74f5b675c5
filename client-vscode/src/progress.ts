// Shows the server's `$/progress` work in VS Code and feeds the status bar. Work started by a long command
// (profile, optimize) appears in that command's cancellable notification; other work (e.g. a compile on save)
// appears quietly in the window's status area. Cancelling sends both $/cancelRequest and
// window/workDoneProgress/cancel, whichever the server listens to.
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
  type ProgressToken,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from 'vscode-languageserver-protocol';
import { prefixedTitle, unprefixed, withElapsed } from './commandModel';
import { ActivityTracker, trackWorkDone } from './activity';

type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

/** The parts of LanguageClient this module uses, so tests can drive it with a fake. */
export interface ProgressClient {
  onRequest(type: typeof WorkDoneProgressCreateRequest.type, handler: (params: { token: ProgressToken }) => void): vscode.Disposable;
  onProgress(type: typeof WorkDoneProgress.type, token: ProgressToken, handler: (value: ProgressValue) => void): vscode.Disposable;
  sendNotification(type: typeof WorkDoneProgressCancelNotification.type, params: { token: ProgressToken }): Promise<void>;
  sendRequest(
    type: typeof ExecuteCommandRequest.type,
    params: { command: string; arguments?: unknown[]; workDoneToken?: ProgressToken },
    token?: vscode.CancellationToken,
  ): Promise<unknown>;
}

/** The handleWorkDoneProgress middleware: the activity follows every work-done report the client receives. */
export function workDoneMiddleware(
  tracker: ActivityTracker,
  coordinator: () => ProgressCoordinator | undefined,
): (token: ProgressToken, value: ProgressValue, next: (token: ProgressToken, value: ProgressValue) => void) => void {
  return (token, value, next) => {
    trackWorkDone(tracker, String(token), value, coordinator()?.runningCommand);
    next(token, value);
  };
}

type Sink = vscode.Progress<{ message?: string; increment?: number }>;

interface CommandRun {
  command: string;
  sink: Sink;
  tokens: Set<ProgressToken>; // progress the server reports for this run
  lastPercentage: number;
  message?: string; // the server's last message, shown with the time since the run started
  started: number;
}

// How often the notification's elapsed time moves while the server says nothing new (a long compile or run).
export const ELAPSED_TICK_MS = 1000;

let clientTokens = 0;

export class ProgressCoordinator implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private running: CommandRun | undefined;

  constructor(
    private readonly client: ProgressClient,
    readonly tracker: ActivityTracker,
  ) {}

  /** Takes over window/workDoneProgress/create from the client's default handler (call after start). */
  install(): void {
    this.disposables.push(
      this.client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => this.watch(token, undefined)),
    );
  }

  /** Runs a server command with a cancellable notification that shows the server's progress for it. */
  async runCommand(command: string, args: unknown[], title: string): Promise<unknown> {
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      async (sink, cancel) => {
        const token = `tritonlens-client-${++clientTokens}`;
        const run: CommandRun = { command, sink, tokens: new Set([token]), lastPercentage: 0, started: Date.now() };
        const ticker = setInterval(() => run.sink.report({ message: this.elapsedMessage(run) }), ELAPSED_TICK_MS);
        const previous = this.running;
        this.running = run;
        const watching = this.watch(token, run);
        const cancelSub = cancel.onCancellationRequested(() => {
          for (const t of run.tokens) void this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token: t });
        });
        this.tracker.begin({ token, title, command });
        try {
          return await this.client.sendRequest(
            ExecuteCommandRequest.type,
            { command, arguments: args, workDoneToken: token },
            cancel,
          );
        } finally {
          clearInterval(ticker);
          cancelSub.dispose();
          watching.dispose();
          this.tracker.end(token);
          if (this.running === run) this.running = previous;
        }
      },
    );
  }

  private watch(token: ProgressToken, run: CommandRun | undefined): vscode.Disposable {
    const key = String(token);
    let finish: (() => void) | undefined;
    let attached = run;
    const sub = this.client.onProgress(WorkDoneProgress.type, token, (value) => {
      if (value.kind === 'begin') {
        // Server-created work that starts while a command runs belongs to that command's notification.
        attached = attached ?? this.running;
        attached?.tokens.add(token);
        trackWorkDone(this.tracker, key, value, attached?.command);
        if (attached) {
          // The notification's title already says "tritonlens: ...": the server's title follows it unprefixed.
          this.show(attached, value.message ?? unprefixed(value.title), value.percentage);
        } else {
          void vscode.window.withProgress(
            { location: vscode.ProgressLocation.Window, title: prefixedTitle(value.title) },
            (sink) =>
              new Promise<void>((resolve) => {
                finish = resolve;
                if (value.message) sink.report({ message: value.message });
                this.windowSinks.set(key, sink);
              }),
          );
        }
      } else if (value.kind === 'report') {
        trackWorkDone(this.tracker, key, value);
        if (attached) this.show(attached, value.message, value.percentage);
        else if (value.message) this.windowSinks.get(key)?.report({ message: value.message });
      } else {
        trackWorkDone(this.tracker, key, value);
        this.windowSinks.delete(key);
        finish?.();
        sub.dispose();
      }
    });
    return {
      dispose: () => {
        this.tracker.end(key);
        this.windowSinks.delete(key);
        finish?.();
        sub.dispose();
      },
    };
  }

  private readonly windowSinks = new Map<string, Sink>();

  /** The command whose notification work begun now belongs to, if any. */
  get runningCommand(): string | undefined {
    return this.running?.command;
  }

  private show(run: CommandRun, message: string | undefined, percentage: number | undefined): void {
    let increment: number | undefined;
    if (percentage !== undefined && percentage > run.lastPercentage) {
      increment = percentage - run.lastPercentage;
      run.lastPercentage = percentage;
    }
    if (message) run.message = message;
    run.sink.report({ message: this.elapsedMessage(run), increment });
  }

  private elapsedMessage(run: CommandRun): string {
    return withElapsed(run.message, (Date.now() - run.started) / 1000);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.tracker.clear();
  }
}
