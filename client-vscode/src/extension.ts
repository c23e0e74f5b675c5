// Entry point: wires the language client, status bar, kernels view, IR view and commands together.
import * as os from 'node:os';
import * as vscode from 'vscode';
import type { LanguageClient, Middleware } from 'vscode-languageclient/node';
import { ActivityTracker } from './activity';
import { CandidateDocuments, showCandidateDiff } from './candidateDiff';
import { commandContextKeys, offersOf } from './candidateModel';
import { advertisedCommands, defaultArguments, fallbackCommands, progressTitle } from './commandModel';
import { registerClientCommands, registerFallbacks } from './commands';
import {
  CANDIDATE_REQUEST,
  CLIENT_COMMANDS,
  Commands,
  CONFIG_SECTION,
  IR_REQUEST,
  KERNELS_REQUEST,
  KERNELS_VIEW,
  LONG_RUNNING_COMMANDS,
  SERVER_COMMANDS,
  STATUS_NOTIFICATION,
} from './constants';
import { confirmMultiLine, trustedCommands, trustHover } from './evidence';
import { resolveInterpreter, type Interpreter } from './interpreter';
import type { IrQuery } from './irModel';
import { IrView } from './irView';
import { KernelsTree } from './kernelsTree';
import { ProgressCoordinator, workDoneMiddleware } from './progress';
import { onPythonInterpreterChanged, pythonExtensionInterpreter } from './pythonExtension';
import { ServerManager } from './server';
import { StatusBar } from './statusBar';
import { parseRunnerStatus, runnersFromCommandResult } from './statusModel';
import { restrictSection, trustedValue } from './trust';

const KERNELS_CHANGED = 'tritonlens/kernelsChanged';

function notRunning(): never {
  throw new Error('the tritonlens server is not running');
}

/** What activate returns: lets tests and other extensions see the client's state. */
export interface TritonLensApi {
  readonly client: LanguageClient | undefined;
  readonly interpreter: Interpreter | undefined;
  readonly statusText: string;
  restart(): Promise<void>;
}

export async function activate(context: vscode.ExtensionContext): Promise<TritonLensApi> {
  const log = vscode.window.createOutputChannel('tritonlens', { log: true });
  const tracker = new ActivityTracker();
  const status = new StatusBar(tracker);
  let advertised: string[] = [];
  let coordinator: ProgressCoordinator | undefined;
  let fallbacks: vscode.Disposable[] = [];
  let interpreter: Interpreter | undefined;

  const dropFallbacks = (): void => {
    for (const d of fallbacks.splice(0)) d.dispose();
  };

  const kernels = new KernelsTree(async () => {
    const client = manager.current;
    if (!client) throw new Error('the tritonlens server is not running');
    return client.sendRequest(KERNELS_REQUEST, {});
  });
  const irView = new IrView(async (query: IrQuery) => {
    const client = manager.current;
    if (!client) throw new Error('the tritonlens server is not running');
    return client.sendRequest(IR_REQUEST, query);
  });

  const candidates = new CandidateDocuments(async (uri, id) =>
    (manager.current ?? notRunning()).sendRequest(CANDIDATE_REQUEST, { uri, id }),
  );
  const setOffered = (commands: string[]): void => {
    for (const [key, value] of Object.entries(commandContextKeys(commands, SERVER_COMMANDS))) {
      void vscode.commands.executeCommand('setContext', key, value);
    }
  };

  const middleware: Middleware = {
    // Untrusted workspace: settings naming executables, runners or key variables come from user scope only.
    workspace: {
      configuration: async (params, token, next) => {
        const result = await next(params, token);
        if (vscode.workspace.isTrusted || !Array.isArray(result)) return result;
        return result.map((value: unknown, i: number) => {
          const item = params.items[i];
          if (item?.section !== CONFIG_SECTION) return value;
          const config = vscode.workspace.getConfiguration(CONFIG_SECTION, item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined);
          return restrictSection(value, false, (key) => config.inspect(key));
        });
      },
    },
    // Every work-done report reaches the status bar, also for work the language client shows itself.
    handleWorkDoneProgress: workDoneMiddleware(tracker, () => coordinator),
    // The Kernels view shows the same findings as Problems: refresh it whenever diagnostics arrive, not on save.
    handleDiagnostics: (uri, diagnostics, next) => {
      next(uri, diagnostics);
      kernels.refreshSoon();
    },
    provideHover: async (document, position, token, next) =>
      trustHover(await next(document, position, token), trustedCommands([...advertised, ...CLIENT_COMMANDS, ...SERVER_COMMANDS])),
    provideCodeActions: async (document, range, ctx, token, next) => {
      const actions = await next(document, range, ctx, token);
      return actions?.map(confirmMultiLine);
    },
    resolveCodeAction: async (item, token, next) => {
      const action = await next(item, token);
      return action ? confirmMultiLine(action) : action;
    },
    executeCommand: async (command, args, next) => {
      if (args.length === 0 && kernels.rows.length === 0) await kernels.refresh();
      const editor = vscode.window.activeTextEditor;
      const filled = defaultArguments(
        args,
        editor && {
          uri: editor.document.uri.toString(),
          languageId: editor.document.languageId,
          line: editor.selection.active.line,
        },
        kernels.rows,
      );
      if (!Array.isArray(filled)) {
        void vscode.window.showWarningMessage(`tritonlens: ${filled.error}`);
        return undefined;
      }
      try {
        const result = LONG_RUNNING_COMMANDS.includes(command)
          ? await (coordinator ?? notRunning()).runCommand(command, filled, progressTitle(command, filled))
          : await next(command, filled);
        status.setRunners(runnersFromCommandResult(result, status.knownRunners));
        if (command === Commands.optimizeKernel) void offerDiff(result, filled[0]);
        return result;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!/cancel/i.test(message)) void vscode.window.showErrorMessage(`tritonlens: ${command} failed: ${message}`);
        log.error(`${command} failed: ${message}`);
        return undefined;
      } finally {
        void kernels.refresh(); // new findings or measured times
      }
    },
  };

  const manager = new ServerManager(log, {
    middleware,
    onState: (state, detail) => {
      if (state === 'stopped' || state === 'failed') tracker.clear(); // its work ended with it, reported or not
      status.setServer(state, detail);
      if (state === 'failed') {
        // Keep the palette's server commands answering with the reason rather than "command not found".
        dropFallbacks();
        advertised = [];
        setOffered(advertised);
        fallbacks = registerFallbacks([...SERVER_COMMANDS], log, `the tritonlens server is not running (${detail ?? 'see the tritonlens log'})`);
        kernels.setMessage(`The tritonlens server is not running: ${detail ?? 'see the tritonlens log'}`);
      }
    },
    onStarted: (client) => {
      advertised = advertisedCommands(client.initializeResult?.capabilities);
      log.info(`server commands: ${advertised.join(', ') || '(none)'}`);
      setOffered(advertised);
      fallbacks = registerFallbacks(fallbackCommands(advertised, SERVER_COMMANDS), log, 'the running tritonlens server does not offer it');
      coordinator?.dispose();
      coordinator = new ProgressCoordinator(client, tracker);
      coordinator.install();
      client.onNotification(STATUS_NOTIFICATION, (params: unknown) => status.setRunners(parseRunnerStatus(params)));
      client.onNotification(KERNELS_CHANGED, () => void kernels.refresh());
      void kernels.refresh();
    },
  });

  /** After Optimize kernel: name what was verified and offer the diff of a candidate against the buffer. */
  const offerDiff = async (result: unknown, uri: unknown): Promise<void> => {
    const offers = offersOf(result);
    if (offers.length === 0 || typeof uri !== 'string') return;
    const pick = await vscode.window.showInformationMessage(
      `tritonlens: ${offers.length} verified rewrite(s); apply from the code actions (lightbulb).`,
      ...offers.slice(0, 3).map((o) => `Diff: ${o.label}`),
    );
    const chosen = offers.find((o) => pick === `Diff: ${o.label}`);
    if (chosen) await showCandidateDiff(candidates, uri, chosen.id);
  };

  const startServer = async (): Promise<void> => {
    dropFallbacks();
    coordinator?.dispose();
    coordinator = undefined;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const config = vscode.workspace.getConfiguration(CONFIG_SECTION, folder?.uri);
    const configured = trustedValue(vscode.workspace.isTrusted, config.get('interpreter'), config.inspect('interpreter'));
    interpreter = resolveInterpreter(configured, await pythonExtensionInterpreter(folder?.uri), {
      workspaceFolder: folder?.uri.fsPath,
      userHome: os.homedir(),
      env: process.env,
    });
    await manager.restart(interpreter);
  };

  // Restart when the interpreter changes; other settings reach the running server via workspace/configuration.
  let restartTimer: NodeJS.Timeout | undefined;
  const scheduleRestart = (why: string): void => {
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      log.info(`Restarting the server: ${why}`);
      void startServer();
    }, 500);
  };

  context.subscriptions.push(
    log,
    status,
    kernels,
    irView,
    candidates,
    manager,
    vscode.commands.registerCommand(Commands.showCandidateDiff, (uri: unknown, id: unknown) =>
      showCandidateDiff(candidates, uri, id),
    ),
    { dispose: () => dropFallbacks() },
    { dispose: () => coordinator?.dispose() },
    { dispose: () => clearTimeout(restartTimer) },
    vscode.window.registerTreeDataProvider(KERNELS_VIEW, kernels),
    ...registerClientCommands({ log, kernels, irView, restart: startServer }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${CONFIG_SECTION}.interpreter`)) scheduleRestart('tritonlens.interpreter changed');
    }),
    // The user trusted the workspace: start again so the server (and the interpreter setting) know it.
    vscode.workspace.onDidGrantWorkspaceTrust(() => scheduleRestart('the workspace is trusted now')),
  );
  const pySub = await onPythonInterpreterChanged(() => {
    if (interpreter?.source !== 'setting') scheduleRestart('the Python extension selected another interpreter');
  });
  if (pySub) context.subscriptions.push(pySub);

  stopOnDeactivate = () => manager.stop();
  await startServer();

  return {
    get client() {
      return manager.current;
    },
    get interpreter() {
      return interpreter;
    },
    get statusText() {
      return status.text;
    },
    restart: startServer,
  };
}

let stopOnDeactivate: (() => Promise<void>) | undefined;

/** VS Code waits for the returned promise, so the server gets its shutdown/exit before the host goes away. */
export function deactivate(): Promise<void> | undefined {
  return stopOnDeactivate?.();
}
