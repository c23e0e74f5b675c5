// A small stand-in for the `vscode` module, enough for the client's logic to run under vitest in plain Node.
// It models behaviour the tests rely on (edits, events, tree items); window/workspace calls are recorded.

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === 'number') {
      this.start = new Position(a, b as number);
      this.end = new Position(c as number, d as number);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query: string,
  ) {}
  static parse(value: string): Uri {
    const m = /^([a-z][a-z0-9+.-]*):(?:\/\/)?([^?]*)(?:\?(.*))?$/i.exec(value);
    if (!m) return new Uri('file', value, '');
    return new Uri(m[1], m[2].startsWith('/') ? m[2] : `/${m[2]}`, m[3] ? decodeURIComponent(m[3]) : '');
  }
  static file(path: string): Uri {
    return new Uri('file', path, '');
  }
  static from(parts: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(parts.scheme, parts.path ?? '', parts.query ?? '');
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    const base = this.scheme === 'file' ? `file://${this.path}` : `${this.scheme}:${this.path}`;
    return this.query ? `${base}?${encodeURIComponent(this.query)}` : base;
  }
}

export class TextEdit {
  constructor(
    readonly range: Range,
    readonly newText: string,
  ) {}
}

export interface WorkspaceEditEntryMetadata {
  needsConfirmation: boolean;
  label: string;
  description?: string;
}

export class WorkspaceEdit {
  private readonly edits = new Map<string, { uri: Uri; edits: TextEdit[] }>();
  readonly metadata: Array<WorkspaceEditEntryMetadata | undefined> = [];
  replace(uri: Uri, range: Range, newText: string, metadata?: WorkspaceEditEntryMetadata): void {
    const key = uri.toString();
    if (!this.edits.has(key)) this.edits.set(key, { uri, edits: [] });
    this.edits.get(key)!.edits.push(new TextEdit(range, newText));
    this.metadata.push(metadata);
  }
  entries(): Array<[Uri, TextEdit[]]> {
    return [...this.edits.values()].map((e) => [e.uri, e.edits]);
  }
  get size(): number {
    return this.edits.size;
  }
}

export class MarkdownString {
  isTrusted: boolean | { enabledCommands: readonly string[] } | undefined;
  constructor(public value = '') {}
}

export class Hover {
  constructor(readonly contents: Array<MarkdownString | string>) {}
}

export class CodeActionKind {
  static readonly QuickFix = 'quickfix';
}

export class CodeAction {
  edit?: WorkspaceEdit;
  constructor(
    readonly title: string,
    readonly kind?: string,
  ) {}
}

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private readonly listeners = new Set<(e: T) => void>();
  readonly event = (listener: (e: T) => void): Disposable => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class TreeItem {
  description?: string;
  tooltip?: string;
  iconPath?: unknown;
  contextValue?: string;
  command?: { title: string; command: string; arguments?: unknown[] };
  label?: string;
  resourceUri?: Uri;
  constructor(
    labelOrUri: string | Uri,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {
    if (typeof labelOrUri === 'string') this.label = labelOrUri;
    else this.resourceUri = labelOrUri;
  }
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}
export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum LogLevel {
  Off = 0,
  Trace = 1,
  Debug = 2,
  Info = 3,
  Warning = 4,
  Error = 5,
}
export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}
export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}
export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}
export enum OverviewRulerLane {
  Center = 2,
}
export enum TextEditorRevealType {
  InCenterIfOutsideViewport = 2,
}

/** Progress shown through window.withProgress, recorded for assertions. */
export interface RecordedProgress {
  options: { location: ProgressLocation; title?: string; cancellable?: boolean };
  reports: Array<{ message?: string; increment?: number }>;
  cancel: CancellationTokenSource;
  done: boolean;
}

/** An editor as showTextDocument returns it: records decorations and reveals. */
export class FakeEditor {
  decorations: Range[] = [];
  revealed: Range[] = [];
  selection = { active: new Position(0, 0) };
  readonly document: { uri: Uri; languageId: string };
  constructor(uri: Uri) {
    this.document = { uri, languageId: uri.scheme === 'file' ? 'python' : 'plaintext' };
  }
  setDecorations(_type: unknown, ranges: Range[]): void {
    this.decorations = ranges;
  }
  revealRange(range: Range): void {
    this.revealed.push(range);
  }
}

export const recorded = {
  progress: [] as RecordedProgress[],
  messages: [] as Array<{ level: string; text: string }>,
  shown: [] as Array<{ editor: FakeEditor; options: unknown }>,
  reset(): void {
    this.progress.length = 0;
    this.messages.length = 0;
    this.shown.length = 0;
    window.visibleTextEditors.length = 0;
  },
};

export const window = {
  withProgress<R>(
    options: RecordedProgress['options'],
    task: (progress: { report(v: { message?: string; increment?: number }): void }, token: unknown) => Promise<R>,
  ): Promise<R> {
    const entry: RecordedProgress = { options, reports: [], cancel: new CancellationTokenSource(), done: false };
    recorded.progress.push(entry);
    return task({ report: (v) => entry.reports.push(v) }, entry.cancel.token).finally(() => {
      entry.done = true;
    });
  },
  createStatusBarItem() {
    return { text: '', tooltip: '', name: '', command: '', backgroundColor: undefined, show() {}, dispose() {} };
  },
  createTextEditorDecorationType() {
    return { dispose() {} };
  },
  /** The button a test wants "clicked" on the next warning with buttons (undefined: dismissed). */
  nextPick: undefined as string | undefined,
  showWarningMessage(text: string, ...items: string[]) {
    recorded.messages.push({ level: 'warning', text });
    const pick = items.length > 0 ? window.nextPick : undefined;
    window.nextPick = undefined;
    return Promise.resolve(pick);
  },
  showErrorMessage(text: string) {
    recorded.messages.push({ level: 'error', text });
    return Promise.resolve(undefined);
  },
  showTextDocument(doc: { uri: Uri }, options?: unknown): Promise<FakeEditor> {
    const editor = new FakeEditor(doc.uri);
    recorded.shown.push({ editor, options });
    window.visibleTextEditors.push(editor);
    return Promise.resolve(editor);
  },
  activeTextEditor: undefined as unknown,
  visibleTextEditors: [] as FakeEditor[],
  onDidChangeTextEditorSelection: () => new Disposable(),
  onDidChangeVisibleTextEditors: () => new Disposable(),
};

export const workspace = {
  asRelativePath(path: string): string {
    return path.replace(/^\/ws\//, '');
  },
  providers: new Map<string, { provideTextDocumentContent(uri: Uri): Promise<string> | string }>(),
  registerTextDocumentContentProvider(
    scheme: string,
    provider: { provideTextDocumentContent(uri: Uri): Promise<string> | string },
  ): Disposable {
    workspace.providers.set(scheme, provider);
    return new Disposable(() => workspace.providers.delete(scheme));
  },
  /** Like VS Code: a document of a provider's scheme gets its text from that provider. */
  async openTextDocument(uri: Uri): Promise<{ uri: Uri; text: string }> {
    const provider = workspace.providers.get(uri.scheme);
    return { uri, text: provider ? await provider.provideTextDocumentContent(uri) : '' };
  },
  onDidSaveTextDocument: () => new Disposable(),
  /** Open documents, as tests set them up: `getText` like VS Code's. */
  textDocuments: [] as Array<{ uri: Uri; getText(): string }>,
  changeListeners: new Set<(e: { document: { uri: Uri; getText(): string } }) => void>(),
  onDidChangeTextDocument(listener: (e: { document: { uri: Uri; getText(): string } }) => void): Disposable {
    workspace.changeListeners.add(listener);
    return new Disposable(() => workspace.changeListeners.delete(listener));
  },
  workspaceFolders: undefined as unknown,
};

export const commands = {
  registered: new Map<string, (...args: unknown[]) => unknown>(),
  registerCommand(id: string, fn: (...args: unknown[]) => unknown): Disposable {
    if (commands.registered.has(id)) throw new Error(`command '${id}' already exists`);
    commands.registered.set(id, fn);
    return new Disposable(() => commands.registered.delete(id));
  },
  executeCommand: () => Promise.resolve(undefined),
};

export const extensions = {
  getExtension: () => undefined,
};
