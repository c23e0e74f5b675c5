// The commands the client implements itself, and fallbacks for server commands this server lacks.
import * as vscode from 'vscode';
import { CONFIG_SECTION, Commands } from './constants';
import { defaultStages } from './irModel';
import type { IrView } from './irView';
import { kernelAt } from './kernelsModel';
import type { KernelsTree } from './kernelsTree';
import { parseShowIrArgs } from './showIrArgs';
import { targetItems } from './targetPick';

export interface ClientCommandDeps {
  log: vscode.LogOutputChannel;
  kernels: KernelsTree;
  irView: IrView;
  restart(): Promise<void>;
}

export function registerClientCommands(deps: ClientCommandDeps): vscode.Disposable[] {
  const reg = vscode.commands.registerCommand;
  return [
    reg(Commands.restart, () => deps.restart()),
    reg(Commands.showOutput, () => deps.log.show(true)),
    reg(Commands.refreshKernels, () => deps.kernels.refresh()),
    reg(Commands.openLocation, (uri: string, line0: number, col = 0) => openLocation(uri, line0, col)),
    reg(Commands.selectTarget, () => selectTarget()),
    reg(Commands.showIr, (...args: unknown[]) => showIr(deps, args)),
  ];
}

async function openLocation(uri: string, line0: number, col: number): Promise<void> {
  const pos = new vscode.Position(Math.max(0, line0), Math.max(0, col));
  await vscode.window.showTextDocument(vscode.Uri.parse(uri), { selection: new vscode.Range(pos, pos) });
}

async function selectTarget(): Promise<void> {
  const config = vscode.workspace.getConfiguration(CONFIG_SECTION, vscode.window.activeTextEditor?.document.uri);
  const items = targetItems(config.get<string>('target'), config.get<string>('irTarget')).map((item) =>
    item.separator
      ? { label: item.label, kind: vscode.QuickPickItemKind.Separator, item }
      : { label: item.label, description: item.description, item },
  );
  const pick = await vscode.window.showQuickPick(items, { title: 'tritonlens: Select target', placeHolder: 'Platform rules or IR device' });
  if (!pick?.item.setting || !pick.item.value) return;
  // Workspace settings when a folder is open, so the choice travels with the project.
  const scope = vscode.workspace.workspaceFolders?.length
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
  await config.update(pick.item.setting, pick.item.value, scope);
  void vscode.window.setStatusBarMessage(`tritonlens: ${pick.item.setting} = ${pick.item.value}`, 4000);
}

async function showIr(deps: ClientCommandDeps, args: unknown[]): Promise<void> {
  const parsed = parseShowIrArgs(args);
  const editor = vscode.window.activeTextEditor;
  const uri = parsed.uri ?? (editor?.document.languageId === 'python' ? editor.document.uri.toString() : undefined);
  if (!uri) {
    void vscode.window.showWarningMessage('tritonlens: open a Python file with a Triton kernel to show its IR.');
    return;
  }
  const cursorLine0 =
    parsed.line !== undefined
      ? parsed.line - 1
      : editor?.document.uri.toString() === uri
        ? editor.selection.active.line
        : 0;
  if (deps.kernels.rows.length === 0) await deps.kernels.refresh();
  const kernel = parsed.kernel ?? kernelAt(deps.kernels.rows, uri, cursorLine0)?.name;
  if (!kernel) {
    void vscode.window.showWarningMessage('tritonlens: no Triton kernel found at the cursor.');
    return;
  }
  const config = vscode.workspace.getConfiguration(CONFIG_SECTION, vscode.Uri.parse(uri));
  const irTarget = config.get<string>('irTarget');
  let stage = parsed.stage;
  if (!stage) {
    const stages = deps.irView.knownStages(uri, kernel) ?? defaultStages(irTarget);
    stage = await vscode.window.showQuickPick([...stages], {
      title: `tritonlens: IR stage of ${kernel} (${irTarget ?? 'default target'})`,
    });
    if (!stage) return;
  }
  if (parsed.line !== undefined) await openLocation(uri, cursorLine0, 0);
  await deps.irView.show({ uri, kernel, stage, target: irTarget }, cursorLine0);
}

/**
 * Handlers for server commands the server does not offer (a key binding may still run them; the palette hides
 * them): say why, from what the client knows, instead of "command not found".
 */
export function registerFallbacks(ids: string[], log: vscode.LogOutputChannel, why: string): vscode.Disposable[] {
  return ids.map((id) =>
    vscode.commands.registerCommand(id, () => {
      const message = `tritonlens: ${id} is unavailable: ${why}.`;
      log.warn(message);
      void vscode.window.showWarningMessage(message);
    }),
  );
}
