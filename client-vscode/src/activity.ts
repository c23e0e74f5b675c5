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
