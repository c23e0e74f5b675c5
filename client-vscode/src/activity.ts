// What the server is busy with, from its `$/progress` work-done reports: pure bookkeeping, no vscode imports.

export type Activity = 'idle' | 'analyzing' | 'profiling';

export interface ProgressEntry {
  token: string;
  title: string;
  message?: string;
  percentage?: number;
  command?: string; // set when the client started the work with workspace/executeCommand
}

const PROFILING = /profil|measur|benchmark|\bncu\b|msprof/i;

/** Classifies one piece of work: profiling when its command or title says so, analyzing otherwise. */
export function classify(entry: ProgressEntry): Activity {
  if (entry.command && /profile/i.test(entry.command)) return 'profiling';
  return PROFILING.test(entry.title) || PROFILING.test(entry.message ?? '') ? 'profiling' : 'analyzing';
}

export class ActivityTracker {
  private readonly entries = new Map<string, ProgressEntry>();
  private readonly listeners = new Set<() => void>();

  begin(entry: ProgressEntry): void {
    this.entries.set(entry.token, { ...entry });
    this.changed();
  }

  report(token: string, message?: string, percentage?: number): void {
    const entry = this.entries.get(token);
    if (!entry) return;
    if (message !== undefined) entry.message = message;
    if (percentage !== undefined) entry.percentage = percentage;
    this.changed();
  }

  entry(token: string): ProgressEntry | undefined {
    return this.entries.get(token);
  }

  end(token: string): void {
    if (this.entries.delete(token)) this.changed();
  }

  clear(): void {
    if (this.entries.size === 0) return;
    this.entries.clear();
    this.changed();
  }

  /** Profiling wins over analyzing: it is the slower, rarer and more interesting state. */
  get activity(): Activity {
    let out: Activity = 'idle';
    for (const entry of this.entries.values()) {
      const kind = classify(entry);
      if (kind === 'profiling') return kind;
      out = kind;
    }
    return out;
  }

  /** The most recently started piece of work, for the status bar's text. */
  get current(): ProgressEntry | undefined {
    let last: ProgressEntry | undefined;
    for (const entry of this.entries.values()) last = entry;
    return last;
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

/** The parts of a `$/progress` work-done value the tracker reads. */
export interface WorkDoneValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
  percentage?: number;
}

/**
 * Feeds `tracker` from one work-done report, whoever shows the work: the client's progress middleware sees every
 * report, also for work the language client displays itself (progress begun before our coordinator is installed,
 * or after the client restarted the server on its own), so the status bar never says idle while work runs.
 * `command`: the command running now, for work that begins while it runs.
 */
export function trackWorkDone(tracker: ActivityTracker, token: string, value: WorkDoneValue, command?: string): void {
  if (value.kind === 'begin') {
    const known = tracker.entry(token);
    tracker.begin({
      token,
      title: value.title ?? known?.title ?? '',
      message: value.message,
      percentage: value.percentage,
      command: known?.command ?? command,
    });
  } else if (value.kind === 'report') {
    tracker.report(token, value.message, value.percentage);
  } else {
    tracker.end(token);
  }
}
