import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { discardEarly, startEarly, takeEarly, type SpawnLine } from '../../src/earlyServer';

// A stand-in server: waits on stdin like `tritonlens serve` does before `initialize`.
const line = (tag: string): SpawnLine => ({
  command: process.execPath,
  args: ['-e', `process.stdin.resume(); // ${tag}`],
  cwd: undefined,
});

afterEach(() => discardEarly());

describe('the server started at load time', () => {
  it('is handed over when activate() resolves the same command line, once', () => {
    startEarly(line('a'), process.env);
    const proc = takeEarly(line('a'));
    expect(proc?.pid).toBeTypeOf('number');
    expect(proc?.exitCode).toBeNull();
    expect(takeEarly(line('a'))).toBeUndefined(); // a restart spawns afresh
    proc?.kill();
  });

  it('is stopped, not used, when activate() resolves another command line', async () => {
    startEarly(line('a'), process.env);
    const other = takeEarly(line('b'));
    expect(other).toBeUndefined();
  });

  it('is stopped when nobody takes it', async () => {
    startEarly(line('a'), process.env);
    const again = line('c');
    startEarly(again, process.env); // replaces (and stops) the first
    const proc = takeEarly(again);
    expect(proc).toBeDefined();
    const exited = once(proc!, 'exit');
    proc!.kill();
    await exited;
    startEarly(line('d'), process.env);
    discardEarly();
    expect(takeEarly(line('d'))).toBeUndefined();
  });

  it('is not handed over once it has exited', async () => {
    startEarly({ command: process.execPath, args: ['-e', 'process.exit(3)'], cwd: undefined }, process.env);
    await new Promise((r) => setTimeout(r, 1500));
    expect(takeEarly({ command: process.execPath, args: ['-e', 'process.exit(3)'], cwd: undefined })).toBeUndefined();
  });
});
