// Entry point: wires the language client, status bar, kernels view, IR view and commands together.
import * as os from 'node:os';
import * as vscode from 'vscode';
import type { LanguageClient, Middleware } from 'vscode-languageclient/node';
import { ActivityTracker } from './activity';
import { CandidateDocuments, showCandidateDiff } from './candidateDiff';
import { commandContextKeys, diffOffer, offersOf, verifiedOffers, type VerifiedOffers } from './candidateModel';
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
  ROOFLINE_REQUEST,
  SERVER_COMMANDS,
  STATUS_NOTIFICATION,
} from './constants';
import { confirmMultiLine, trustedCommands, trustHover } from './evidence';
import { hasInterpreterSetting, resolveInterpreter, serverExecutable, type Interpreter } from './interpreter';
import type { IrQuery } from './irModel';
import { IrView } from './irView';
import { combineLens, groupByPosition, headlineIndex } from './lensModel';
import { commandOutcome, type Outcome } from './outcomeModel';
import { KernelsTree } from './kernelsTree';
import { ProgressCoordinator, workDoneMiddleware } from './progress';
import { RooflineView } from './rooflineView';
import { onPythonInterpreterChanged, pythonExtensionInterpreter } from './pythonExtension';
import { discardEarly, earlyStartTime, startEarly } from './earlyServer';
import { ServerManager, serverEnv } from './server';
import { StatusBar } from './statusBar';
import { parseRunnerStatus, platformsOfKernels, runnersFromCommandResult } from './statusModel';
import { restrictSection, trustedValue } from './trust';

const KERNELS_CHANGED = 'tritonlens/kernelsChanged';
// Set by the bundle's first line (scripts/build.mjs); absent when this module is loaded unbundled (unit tests).
declare const __tritonlensLoadStart: number | undefined;
const bundleLoadStart = typeof __tritonlensLoadStart === 'number' ? __tritonlensLoadStart : undefined;
const bundleEvaluated = Date.now(); // every import above is evaluated by now

/** The interpreter the `tritonlens.interpreter` setting names (workspace scope only when trusted), if it names one. */
function interpreterFromSetting(folder: vscode.WorkspaceFolder | undefined): { configured: unknown; interpreter?: Interpreter } {
  const config = vscode.workspace.getConfiguration(CONFIG_SECTION, folder?.uri);
  const configured = trustedValue(vscode.workspace.isTrusted, config.get('interpreter'), config.inspect('interpreter'));
  if (!hasInterpreterSetting(configured)) return { configured };
  const ctx = { workspaceFolder: folder?.uri.fsPath, userHome: os.homedir(), env: process.env };
  return { configured, interpreter: resolveInterpreter(configured, undefined, ctx) };
}

// Issue 23: after evaluating this bundle the host waits about as long again (the extension's context) before it
// calls activate(); the server's Python start (imports, ~0.5-1.5 s) runs in that wait. Only when the setting
// names the interpreter: otherwise the Python extension decides, in activate(). activate() takes the process
// only if it resolves the same command line (earlyServer.ts).
function startServerEarly(): void {
  try {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const { interpreter } = interpreterFromSetting(folder);
    if (!interpreter) return;
    const exe = serverExecutable(interpreter);
    startEarly({ command: exe.command, args: exe.args, cwd: folder?.uri.fsPath }, serverEnv());
  } catch {
    // activate() starts the server as before
  }
}
startServerEarly();

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
  // The e2e times activation -> server start -> first diagnostics, and the bundle's load from these stamps.
  const loaded = bundleLoadStart === undefined ? '' : ` (bundle load began ${new Date(bundleLoadStart).toISOString()}, evaluated in ${bundleEvaluated - bundleLoadStart} ms)`;
  const early = earlyStartTime();
  const spawned = early === undefined ? '' : ` (server process started at ${new Date(early).toISOString()} as the bundle loaded)`;
  log.info(`tritonlens extension activating${loaded}${spawned}`);
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
    const rows = await client.sendRequest(KERNELS_REQUEST, {});
    status.setNeededPlatforms(platformsOfKernels(rows));
    return rows;
  });
  const irView = new IrView(async (query: IrQuery) => {
    const client = manager.current;
    if (!client) throw new Error('the tritonlens server is not running');
    return client.sendRequest(IR_REQUEST, query);
  });

  const candidates = new CandidateDocuments(async (uri, id) =>
    (manager.current ?? notRunning()).sendRequest(CANDIDATE_REQUEST, { uri, id }),
  );
  const roofline = new RooflineView(async (uri) => (manager.current ?? notRunning()).sendRequest(ROOFLINE_REQUEST, { uri }));
  const setOffered = (commands: string[]): void => {
    for (const [key, value] of Object.entries(commandContextKeys(commands, SERVER_COMMANDS))) {
      void vscode.commands.executeCommand('setContext', key, value);
    }
  };

  // One lens per kernel: the headline lens stands for its siblings (the other features' lenses on that kernel).
  const lensSiblings = new WeakMap<vscode.CodeLens, vscode.CodeLens[]>();
  const verified = new Map<string, VerifiedOffers>(); // uri -> the last Optimize run's verified rewrites
  // The server refreshes lenses just before it answers Optimize: a lens resolved then waits for the answer.
  let optimizing: Promise<void> | undefined;
  let answered: (() => void) | undefined;
  const lensFeature = (lens: vscode.CodeLens): string => {
    const data = (lens as { data?: { feature?: unknown } }).data;
    return typeof data?.feature === 'string' ? data.feature : '';
  };

  const middleware: Middleware = {
    provideCodeLenses: async (document, token, next) => {
      const lenses = await next(document, token);
      if (!lenses) return lenses;
      return groupByPosition(lenses, (l) => `${l.range.start.line}:${l.range.start.character}`).map((group) => {
        const head = group[headlineIndex(group.map(lensFeature))];
        lensSiblings.set(head, group);
        return head;
      });
    },
    resolveCodeLens: async (lens, token, next) => {
      const group = lensSiblings.get(lens) ?? [lens];
      if (optimizing && lensFeature(lens) === 'optimize') {
        await Promise.race([optimizing, new Promise((r) => setTimeout(r, 3000))]); // never hold a lens for a whole run
      }
      const resolved = await Promise.all(group.map(async (l) => (l.command ? l : ((await next(l, token)) ?? l))));
      const { title, tooltip, headline } = combineLens(
        resolved.map((r, i) => ({ feature: lensFeature(group[i]), title: r.command?.title ?? '' })),
      );
      const head = resolved[headline];
      if (!head.command) return head;
      head.command = { ...head.command, title, tooltip };
      // A verified rewrite's lens opens its diff until the text changes (then it is Optimize again).
      const [uri, kernel] = head.command.arguments ?? [];
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      const offer = lensFeature(group[headline]) === 'optimize' ? diffOffer(verified.get(String(uri)), doc?.version, kernel) : undefined;
      if (offer) {
        head.command = {
          title,
          tooltip: `Click: show the diff of the verified rewrite (${offer.label}); apply it from the lightbulb\n${tooltip}`,
          command: Commands.showCandidateDiff,
          arguments: [uri, offer.id],
        };
      }
      return head;
    },
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
        if (command === Commands.optimizeKernel) optimizing = new Promise((resolve) => (answered = resolve));
        const result = LONG_RUNNING_COMMANDS.includes(command)
          ? await (coordinator ?? notRunning()).runCommand(command, filled, progressTitle(command, filled))
          : await next(command, filled);
        status.setRunners(runnersFromCommandResult(result, status.knownRunners));
        const outcome = commandOutcome(command, filled, result, advertised.includes('tritonlens.recordLaunches'));
        if (outcome) void showOutcome(outcome);
        // After profiling: where the kernels sit on the roofline, beside the editor.
        if (command === Commands.profileKernel && Array.isArray(result) && result.some((r) => r && !r.error)) {
          void roofline.show(String(filled[0]));
        }
        if (command === Commands.optimizeKernel) {
          const offers = verifiedOffers(result);
          if (offers) verified.set(String(filled[0]), offers);
          else verified.delete(String(filled[0]));
          void offerDiff(result, filled[0]);
        }
        return result;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!/cancel/i.test(message)) void vscode.window.showErrorMessage(`tritonlens: ${command} failed: ${message}`);
        log.error(`${command} failed: ${message}`);
        return undefined;
      } finally {
        if (command === Commands.optimizeKernel) {
          optimizing = undefined;
          answered?.(); // after `verified` is set: lenses waiting on the answer resolve with it
        }
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

  /** A command's error or empty answer, said once with what to do (buttons run the next step). */
  const showOutcome = async (outcome: Outcome): Promise<void> => {
    log[outcome.level === 'info' ? 'info' : outcome.level === 'warning' ? 'warn' : 'error'](outcome.message);
    const show =
      outcome.level === 'error'
        ? vscode.window.showErrorMessage
        : outcome.level === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const pick = await show(`tritonlens: ${outcome.message}`, ...outcome.actions.map((a) => a.label));
    const action = outcome.actions.find((a) => a.label === pick);
    if (action) await vscode.commands.executeCommand(action.command, ...action.args);
  };

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
    const fromSetting = interpreterFromSetting(folder);
    // The Python extension is asked only when no setting names the interpreter: activating it can take seconds,
    // and its answer would lose to the setting anyway (issue 23: nothing slow before the server starts).
    interpreter =
      fromSetting.interpreter ??
      resolveInterpreter(fromSetting.configured, await pythonExtensionInterpreter(folder?.uri), {
        workspaceFolder: folder?.uri.fsPath,
        userHome: os.homedir(),
        env: process.env,
      });
    await manager.restart(interpreter);
    discardEarly(); // not taken (another command line): stopped
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
    roofline,
    vscode.commands.registerCommand(Commands.showRoofline, (uri?: unknown) => {
      const target = typeof uri === 'string' ? uri : vscode.window.activeTextEditor?.document.uri.toString();
      if (target) return roofline.show(target);
      void vscode.window.showWarningMessage('tritonlens: open a profiled Python file to show its roofline.');
      return undefined;
    }),
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
  stopOnDeactivate = () => manager.stop();
  await startServer();
  // Subscribed after the start: waiting for the Python extension to activate must not delay the first answer.
  const pySub = await onPythonInterpreterChanged(() => {
    if (interpreter?.source !== 'setting') scheduleRestart('the Python extension selected another interpreter');
  });
  if (pySub) context.subscriptions.push(pySub);

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
  discardEarly();
  return stopOnDeactivate?.();
}
