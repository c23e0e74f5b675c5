// Starts, restarts and stops the tritonlens language server (`<python> -m tritonlens.server.cli serve`, stdio).
import type { ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';
import { LanguageClient, State, type LanguageClientOptions, type Middleware, type ServerOptions } from 'vscode-languageclient/node';
import { Commands, CONFIG_SECTION, EXTENSION_NAME } from './constants';
import { spawnServer, takeEarly, type SpawnLine } from './earlyServer';
import { describeInterpreter, serverExecutable, type Interpreter } from './interpreter';
import { checkServerImportable } from './serverCheck';
import { traceFor } from './logLevel';
import { trustOption } from './trust';

export interface ServerHooks {
  middleware: Middleware;
  /** Called with each new client after it started, to attach request/notification handlers. */
  onStarted(client: LanguageClient): void | Promise<void>;
  onState(state: 'starting' | 'running' | 'stopped' | 'failed', detail?: string): void;
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private process: ChildProcess | undefined; // the running server's process (see start)
  private starting: Promise<LanguageClient | undefined> | undefined;
  private readonly logSub: vscode.Disposable;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly hooks: ServerHooks,
  ) {
    this.logSub = log.onDidChangeLogLevel((level) => void this.client?.setTrace(traceFor(level)));
  }

  get current(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  /** Stops any running server and starts a new one with `interpreter`; concurrent calls are serialized. */
  async restart(interpreter: Interpreter): Promise<LanguageClient | undefined> {
    const previous = this.starting;
    this.starting = (async () => {
      await previous?.catch(() => undefined);
      await this.stop();
      return this.start(interpreter);
    })();
    return this.starting;
  }

  private async start(interpreter: Interpreter): Promise<LanguageClient | undefined> {
    this.hooks.onState('starting', describeInterpreter(interpreter));
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    this.log.info(`Starting tritonlens server with ${describeInterpreter(interpreter)}`);
    // No import check first: it cost a second Python start before the first diagnostics (issue 23). When the
    // server does not start, the check runs then and says why.
    const exe = serverExecutable(interpreter);
    const line: SpawnLine = { command: exe.command, args: exe.args, cwd };
    // The process started while the extension loaded (earlyServer.ts) when it runs this command line; else a new
    // one. Kept here too: the client kills only processes it spawned itself, this one is stopped in stop().
    const serverOptions: ServerOptions = async () => {
      const proc = takeEarly(line) ?? spawnServer(line, serverEnv());
      this.process = proc;
      return proc;
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      synchronize: { configurationSection: CONFIG_SECTION },
      // VS Code's hover already shows the diagnostic's message: the server's hover adds only what it does not say.
      // clientCommands: commands the client runs itself, which server code actions may name (the IR view).
      // Trust: in restricted mode the server runs level 1 only (server/trust/workspace_trust.py).
      initializationOptions: {
        hoverShowsDiagnostics: true,
        clientCommands: [Commands.showIr],
        ...trustOption(vscode.workspace.isTrusted),
      },
      middleware: this.hooks.middleware,
      // Hover links are trusted per hover by the middleware, for tritonlens commands only.
      markdown: { isTrusted: false, supportHtml: false },
      connectionOptions: { maxRestartCount: 3 },
    };
    const client = new LanguageClient(EXTENSION_NAME, 'tritonlens', serverOptions, clientOptions);
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) this.hooks.onState('running', describeInterpreter(interpreter));
      else if (e.newState === State.Stopped) this.hooks.onState('stopped');
    });
    this.client = client;
    try {
      await client.start();
      await client.setTrace(traceFor(this.log.logLevel));
      await this.hooks.onStarted(client);
      this.log.info(`tritonlens server started (pid ${this.process?.pid ?? '?'})`);
      return client;
    } catch (err) {
      const problem = await checkServerImportable(interpreter, cwd);
      if (problem) {
        if (this.client === client) this.client = undefined;
        void client.dispose(2000).catch(() => undefined);
        this.log.error(problem);
        this.hooks.onState('failed', problem);
        void vscode.window.showErrorMessage(problem, 'Open settings').then((pick) => {
          if (pick) void vscode.commands.executeCommand('workbench.action.openSettings', `${CONFIG_SECTION}.interpreter`);
        });
        return undefined;
      }
      const message = err instanceof Error ? err.message : String(err);
      this.log.error(`tritonlens server failed to start: ${message}`);
      this.hooks.onState('failed', message);
      return undefined;
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    const proc = this.process;
    this.client = undefined;
    this.process = undefined;
    if (!client) return;
    try {
      await client.dispose(5000); // stops the server (shutdown + exit) and frees the client's registrations
    } catch (err) {
      this.log.warn(`stopping the server: ${err instanceof Error ? err.message : String(err)}`);
    }
    // What the client does for processes it spawns: one that did not exit after shutdown/exit is killed.
    if (proc) setTimeout(() => proc.exitCode === null && proc.signalCode === null && proc.kill(), 2000).unref();
    this.hooks.onState('stopped');
  }

  dispose(): void {
    this.logSub.dispose();
    void this.stop();
  }
}

/** The environment the server runs with (also for the process started at load time). */
export function serverEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONUNBUFFERED: '1' };
}
