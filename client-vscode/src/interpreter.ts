// Which Python runs the language server: the `tritonlens.interpreter` setting, else the Python extension's
// selected interpreter, else `python3`. Pure helpers here; the Python extension lookup is in pythonExtension.ts.

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface Interpreter {
  command: string[]; // executable followed by any fixed arguments
  source: InterpreterSource;
}

export interface ServerExecutable {
  command: string;
  args: string[];
}

export const SERVER_MODULE = 'tritonlens.server.cli';
export const DEFAULT_PYTHON = 'python3';

export interface VariableContext {
  workspaceFolder?: string;
  userHome?: string;
  env?: Record<string, string | undefined>;
}

/** Expands ${workspaceFolder}, ${userHome}, ${env:NAME} and a leading ~ the way VS Code settings users expect. */
export function expandVariables(value: string, ctx: VariableContext): string {
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name, envName) => {
    if (name === 'workspaceFolder') return ctx.workspaceFolder ?? whole;
    if (name === 'userHome') return ctx.userHome ?? whole;
    return ctx.env?.[envName] ?? '';
  });
  if (ctx.userHome && (out === '~' || out.startsWith('~/'))) out = ctx.userHome + out.slice(1);
  return out;
}

/** Picks the interpreter by precedence; empty or blank entries in the setting count as "not set". */
/** Whether the `tritonlens.interpreter` setting names an interpreter (resolveInterpreter then uses it). */
export function hasInterpreterSetting(setting: unknown): boolean {
  if (Array.isArray(setting)) return setting.some((p) => typeof p === 'string' && p.trim() !== '');
  return typeof setting === 'string' && setting.trim() !== '';
}

export function resolveInterpreter(
  setting: unknown,
  pythonExtensionCommand: string[] | undefined,
  ctx: VariableContext = {},
): Interpreter {
  if (Array.isArray(setting)) {
    const parts = setting.filter((p): p is string => typeof p === 'string' && p.trim() !== '');
    if (parts.length > 0) return { command: parts.map((p) => expandVariables(p, ctx)), source: 'setting' };
  } else if (typeof setting === 'string' && setting.trim() !== '') {
    // Accept a plain string too: a common hand-edit of settings.json.
    return { command: [expandVariables(setting.trim(), ctx)], source: 'setting' };
  }
  if (pythonExtensionCommand && pythonExtensionCommand.length > 0 && pythonExtensionCommand[0]) {
    return { command: [...pythonExtensionCommand], source: 'python-extension' };
  }
  return { command: [DEFAULT_PYTHON], source: 'default' };
}

/** The command line that starts `tritonlens serve` over stdio with the given interpreter. */
export function serverExecutable(interpreter: Interpreter): ServerExecutable {
  const [command, ...rest] = interpreter.command;
  return { command, args: [...rest, '-m', SERVER_MODULE, 'serve'] };
}

export function describeInterpreter(interpreter: Interpreter): string {
  const from = {
    setting: 'from setting tritonlens.interpreter',
    'python-extension': 'selected in the Python extension',
    default: 'default',
  }[interpreter.source];
  return `${interpreter.command.join(' ')} (${from})`;
}
