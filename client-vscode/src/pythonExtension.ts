// Optional integration with the Python extension (ms-python.python): its selected interpreter and changes to it.
// The extension is not a hard dependency; every call tolerates its absence or an older API.
import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

interface EnvironmentPath {
  id: string;
  path: string;
}
interface ResolvedEnvironment {
  executable: { uri?: vscode.Uri };
}
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
    onDidChangeExecutionDetails?: vscode.Event<unknown>;
  };
}

async function api(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (!ext) return undefined;
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch {
    return undefined;
  }
}

/** The interpreter the Python extension has selected for `resource`, as a command line; undefined if none. */
export async function pythonExtensionInterpreter(resource?: vscode.Uri): Promise<string[] | undefined> {
  const py = await api();
  if (!py) return undefined;
  try {
    if (py.environments) {
      const active = py.environments.getActiveEnvironmentPath(resource);
      const resolved = await py.environments.resolveEnvironment(active);
      const exe = resolved?.executable.uri?.fsPath;
      if (exe) return [exe];
    }
    const cmd = py.settings?.getExecutionDetails(resource).execCommand;
    return cmd && cmd.length > 0 ? cmd : undefined;
  } catch {
    return undefined;
  }
}

/** Calls `listener` when the user picks another interpreter in the Python extension. */
export async function onPythonInterpreterChanged(listener: () => void): Promise<vscode.Disposable | undefined> {
  const py = await api();
  const event = py?.environments?.onDidChangeActiveEnvironmentPath ?? py?.settings?.onDidChangeExecutionDetails;
  return event ? event(() => listener()) : undefined;
}
