// Pure decisions about commands: which to register as fallbacks, what arguments a palette invocation gets,
// and how progress is titled. No vscode imports.
import { kernelAt, type KernelRow } from './kernelsModel';

export interface EditorContext {
  uri: string;
  languageId: string;
  line: number; // 0-based cursor line
}

/**
 * Statically contributed server commands that this server does not advertise: the client registers them so the
 * palette entry explains itself instead of failing with "command not found". Advertised ones are registered by
 * vscode-languageclient itself (including commands the server adds later, which need no client change).
 */
export function fallbackCommands(advertised: readonly string[], staticServerCommands: readonly string[]): string[] {
  const have = new Set(advertised);
  return staticServerCommands.filter((c) => !have.has(c));
}

/**
 * Arguments for a server command run without any (from the palette or a key binding): the server's convention is
 * `[uri, kernelName]`, taken from the active editor and the kernel around its cursor. Returns an error message
 * when there is no Triton kernel to act on.
 */
export function defaultArguments(
  args: unknown[],
  editor: EditorContext | undefined,
  kernels: KernelRow[],
): unknown[] | { error: string } {
  // From the Triton kernels view's context menu: the tree node of a kernel.
  const node = args[0] as { kind?: unknown; row?: { uri?: unknown; name?: unknown } } | undefined;
  if (args.length > 0 && node?.kind === 'kernel' && typeof node.row?.uri === 'string' && typeof node.row.name === 'string') {
    return [node.row.uri, node.row.name];
  }
  if (args.length > 0) return args;
  if (!editor || editor.languageId !== 'python') {
    return { error: 'Open a Python file with a Triton kernel and put the cursor in the kernel first.' };
  }
  const kernel = kernelAt(kernels, editor.uri, editor.line);
  if (!kernel) return { error: 'No Triton kernel (@triton.jit function) found in this file.' };
  return [editor.uri, kernel.name];
}

const VERBS: Record<string, string> = {
  analyzeKernel: 'Analyzing',
  profileKernel: 'Profiling',
  optimizeKernel: 'Optimizing',
};

/** "Profiling add_kernel" for tritonlens.profileKernel with args [uri, "add_kernel"]. */
export function progressTitle(command: string, args: unknown[]): string {
  const short = command.replace(/^tritonlens\./, '');
  const verb = VERBS[short] ?? `Running ${short}`;
  const kernel = typeof args[1] === 'string' ? args[1] : undefined;
  return `tritonlens: ${verb}${kernel ? ` ${kernel}` : ''}`;
}

/** `title` without a leading "tritonlens:" (servers may or may not put it there). */
export function unprefixed(title: string): string {
  return title.replace(/^\s*tritonlens:\s*/i, '');
}

/** "tritonlens: <title>" exactly once, whether or not the server already put the prefix in its progress title. */
export function prefixedTitle(title: string): string {
  return `tritonlens: ${unprefixed(title)}`;
}

/** Reads the server's advertised command list out of its capabilities, tolerating any shape. */
export function advertisedCommands(capabilities: unknown): string[] {
  const provider = (capabilities as { executeCommandProvider?: { commands?: unknown } } | undefined)
    ?.executeCommandProvider;
  const commands = provider?.commands;
  return Array.isArray(commands) ? commands.filter((c): c is string => typeof c === 'string') : [];
}

/** A progress message with the seconds since the work began, so a long step visibly moves: "compiling · 12s". */
export function withElapsed(message: string | undefined, seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 2) return message ?? ''; // a quick step needs no clock
  const clock = s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
  return message ? `${message} · ${clock}` : clock;
}
