// The language server started while the editor still prepares the extension's context (issue 23): the host
// evaluates the bundle, then waits (storage, mementos) about as long as Python takes to import the server, before
// it calls activate(). A process started at load time with the command line activate() would use is handed to the
// language client instead of a fresh one; anything else (another command line, a dead process) is not used.
import { spawn, type ChildProcess } from 'node:child_process';

export interface SpawnLine {
  command: string;
  args: string[];
  cwd: string | undefined;
}

let early: { key: string; process: ChildProcess } | undefined;
let startedAt: number | undefined; // when startEarly spawned (the e2e's stamp)

/** When the process started at load time was spawned (undefined if none was). */
export function earlyStartTime(): number | undefined {
  return startedAt;
}

const keyOf = (line: SpawnLine): string => JSON.stringify([line.command, line.args, line.cwd ?? null]);

/** Spawns the server as a language client would (stdio pipes), keeping spawn errors from throwing. */
export function spawnServer(line: SpawnLine, env: NodeJS.ProcessEnv): ChildProcess {
  const proc = spawn(line.command, line.args, { cwd: line.cwd, env, stdio: 'pipe' });
  proc.on('error', () => undefined); // the client sees the closed pipes; the import check then says why
  return proc;
}

/** Starts the server now, for activate() to take; a second call replaces (and stops) the first process. */
export function startEarly(line: SpawnLine, env: NodeJS.ProcessEnv): void {
  discardEarly();
  early = { key: keyOf(line), process: spawnServer(line, env) };
  startedAt = Date.now();
}

const alive = (proc: ChildProcess): boolean => proc.pid !== undefined && proc.exitCode === null && proc.signalCode === null;

/** The early process if it runs `line` and is alive (once: a restart spawns afresh); stops it otherwise. */
export function takeEarly(line: SpawnLine): ChildProcess | undefined {
  const taken = early;
  early = undefined;
  if (!taken) return undefined;
  if (taken.key === keyOf(line) && alive(taken.process)) return taken.process;
  taken.process.kill();
  return undefined;
}

/** Stops an early process nobody took (activate failed, or another interpreter was chosen). */
export function discardEarly(): void {
  const taken = early;
  early = undefined;
  if (taken && alive(taken.process)) taken.process.kill();
}
