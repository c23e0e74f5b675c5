// The "Triton kernels" view: workspace kernels from `tritonlens/kernels`, grouped by file, with their findings
// and last measured times. Clicking a kernel or finding opens its line.
import * as vscode from 'vscode';
import { Commands } from './constants';
import {
  findingLabel,
  groupByFile,
  kernelDescription,
  parseKernels,
  type FileGroup,
  type KernelFinding,
  type KernelRow,
} from './kernelsModel';

export type KernelNode =
  | { kind: 'file'; group: FileGroup }
  | { kind: 'kernel'; row: KernelRow }
  | { kind: 'finding'; row: KernelRow; finding: KernelFinding }
  | { kind: 'message'; text: string };

const SEVERITY_ICONS: Record<KernelFinding['severity'], string> = {
  error: 'error',
  warning: 'warning',
  info: 'info',
  hint: 'lightbulb',
};

/** The folder part of a workspace-relative path, shown beside the file name; empty at the workspace root. */
export function folderOf(relativePath: string): string {
  const cut = relativePath.lastIndexOf('/');
  return cut > 0 ? relativePath.slice(0, cut) : '';
}

export class KernelsTree implements vscode.TreeDataProvider<KernelNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<KernelNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private rowsCache: KernelRow[] = [];
  private status: string | undefined = 'Waiting for the tritonlens server…';
  private pending: Promise<void> | undefined;
  private again: Promise<void> | undefined;
  private soon: NodeJS.Timeout | undefined;

  constructor(private readonly fetch: () => Promise<unknown>) {}

  get rows(): KernelRow[] {
    return this.rowsCache;
  }

  /**
   * Asks the server again. A call while a request is in flight gets one more request after it (that request may
   * have been answered before the change that prompted this call); any number of such calls share that one.
   */
  refresh(): Promise<void> {
    if (this.pending) {
      this.again ??= this.pending.then(() => {
        this.again = undefined;
        return this.refresh();
      });
      return this.again;
    }
    this.pending = this.load().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Refreshes shortly after a burst of changes (e.g. diagnostics published for several files): one request. */
  refreshSoon(delayMs = 200): void {
    clearTimeout(this.soon);
    this.soon = setTimeout(() => void this.refresh(), delayMs);
  }

  setMessage(text: string | undefined): void {
    this.status = text;
    if (text) this.rowsCache = [];
    this.changed.fire(undefined);
  }

  private async load(): Promise<void> {
    try {
      this.rowsCache = parseKernels(await this.fetch());
      this.status = this.rowsCache.length === 0 ? 'No Triton kernels found in the workspace.' : undefined;
    } catch (err) {
      this.status = `Could not list kernels: ${err instanceof Error ? err.message : String(err)}`;
    }
    this.changed.fire(undefined);
  }

  getChildren(node?: KernelNode): KernelNode[] {
    if (!node) {
      if (this.status) return [{ kind: 'message', text: this.status }];
      return groupByFile(this.rowsCache).map((group) => ({ kind: 'file', group }));
    }
    if (node.kind === 'file') return node.group.kernels.map((row) => ({ kind: 'kernel', row }));
    if (node.kind === 'kernel') return node.row.findings.map((finding) => ({ kind: 'finding', row: node.row, finding }));
    return [];
  }

  getTreeItem(node: KernelNode): vscode.TreeItem {
    const C = vscode.TreeItemCollapsibleState;
    switch (node.kind) {
      case 'message':
        return new vscode.TreeItem(node.text, C.None);
      case 'file': {
        const item = new vscode.TreeItem(vscode.Uri.parse(node.group.uri), C.Expanded);
        item.description = folderOf(vscode.workspace.asRelativePath(node.group.path));
        return item;
      }
      case 'kernel': {
        const { row } = node;
        const item = new vscode.TreeItem(row.name, row.findings.length > 0 ? C.Collapsed : C.None);
        item.description = kernelDescription(row);
        item.tooltip = `${row.path}:${row.line}${row.lastMeasuredAt ? `\nmeasured ${row.lastMeasuredAt}` : ''}`;
        item.iconPath = new vscode.ThemeIcon('symbol-function');
        item.contextValue = 'tritonlens.kernel';
        item.command = { title: 'Open', command: Commands.openLocation, arguments: [row.uri, row.line - 1, 0] };
        return item;
      }
      case 'finding': {
        const { finding, row } = node;
        const item = new vscode.TreeItem(findingLabel(finding), C.None);
        item.description = `line ${finding.line}`;
        item.tooltip = `${finding.code} (level ${finding.level}): ${finding.message}`;
        item.iconPath = new vscode.ThemeIcon(SEVERITY_ICONS[finding.severity]);
        item.command = {
          title: 'Open',
          command: Commands.openLocation,
          arguments: [row.uri, finding.line - 1, finding.col],
        };
        return item;
      }
    }
  }

  dispose(): void {
    clearTimeout(this.soon);
    this.changed.dispose();
  }
}
