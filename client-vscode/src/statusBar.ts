// The status bar item: server state, idle / analyzing / profiling, and whether the runners are reachable.
import * as vscode from 'vscode';
import type { ActivityTracker } from './activity';
import { Commands } from './constants';
import { renderStatus, type RunnerStatus, type ServerState } from './statusModel';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private server: ServerState = 'starting';
  private serverDetail: string | undefined;
  private runners: RunnerStatus[] | undefined;
  private neededPlatforms: ReadonlySet<string> | undefined;
  private readonly sub: { dispose(): void };

  constructor(private readonly tracker: ActivityTracker) {
    this.item = vscode.window.createStatusBarItem('tritonlens.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'tritonlens';
    this.item.command = Commands.showOutput;
    this.sub = tracker.onDidChange(() => this.render());
    this.render();
    this.item.show();
  }

  setServer(state: ServerState, detail?: string): void {
    this.server = state;
    this.serverDetail = detail;
    if (state !== 'running') this.runners = undefined;
    this.render();
  }

  setRunners(runners: RunnerStatus[] | undefined): void {
    this.runners = runners;
    this.render();
  }

  /** Platforms the workspace's kernel files target: a missing runner for another platform stays neutral. */
  setNeededPlatforms(platforms: ReadonlySet<string> | undefined): void {
    if (platforms === undefined) return; // an older server: keep what was known
    this.neededPlatforms = platforms;
    this.render();
  }

  get knownRunners(): RunnerStatus[] | undefined {
    return this.runners;
  }

  /** What is shown now; for tests and the e2e log. */
  get text(): string {
    return this.item.text;
  }

  private render(): void {
    const view = renderStatus({
      server: this.server,
      serverDetail: this.serverDetail,
      activity: this.tracker.activity,
      current: this.tracker.current,
      runners: this.runners,
      neededPlatforms: this.neededPlatforms,
    });
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor =
      view.severity === 'normal'
        ? undefined
        : new vscode.ThemeColor(view.severity === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
