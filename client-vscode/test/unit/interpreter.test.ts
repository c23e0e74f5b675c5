import { describe, expect, it } from 'vitest';
import { describeInterpreter, expandVariables, hasInterpreterSetting, resolveInterpreter, serverExecutable } from '../../src/interpreter';

describe('resolveInterpreter', () => {
  it('prefers the tritonlens.interpreter setting over the Python extension', () => {
    const got = resolveInterpreter(['/venv/bin/python', '-X', 'utf8'], ['/usr/bin/python3.11']);
    expect(got).toEqual({ command: ['/venv/bin/python', '-X', 'utf8'], source: 'setting' });
  });

  it('uses the Python extension when the setting is empty or blank', () => {
    expect(resolveInterpreter([], ['/opt/py/bin/python'])).toEqual({ command: ['/opt/py/bin/python'], source: 'python-extension' });
    expect(resolveInterpreter(['  '], ['/opt/py/bin/python']).source).toBe('python-extension');
  });

  it('falls back to python3', () => {
    expect(resolveInterpreter(undefined, undefined)).toEqual({ command: ['python3'], source: 'default' });
    expect(resolveInterpreter([], [])).toEqual({ command: ['python3'], source: 'default' });
  });

  it('accepts a plain string and ignores non-string entries', () => {
    expect(resolveInterpreter('/x/python', undefined).command).toEqual(['/x/python']);
    expect(resolveInterpreter([42, '/y/python'], undefined).command).toEqual(['/y/python']);
  });

  it('expands variables in the setting', () => {
    const got = resolveInterpreter(['${workspaceFolder}/.venv/bin/python'], undefined, { workspaceFolder: '/ws' });
    expect(got.command).toEqual(['/ws/.venv/bin/python']);
  });
});

describe('expandVariables', () => {
  const ctx = { workspaceFolder: '/ws', userHome: '/home/u', env: { VENV: '/v' } };
  it('expands workspaceFolder, userHome, env and ~', () => {
    expect(expandVariables('${workspaceFolder}/a', ctx)).toBe('/ws/a');
    expect(expandVariables('${userHome}/b', ctx)).toBe('/home/u/b');
    expect(expandVariables('${env:VENV}/bin/python', ctx)).toBe('/v/bin/python');
    expect(expandVariables('~/py', ctx)).toBe('/home/u/py');
  });
  it('leaves unknown context alone and empties unset env vars', () => {
    expect(expandVariables('${workspaceFolder}/a', {})).toBe('${workspaceFolder}/a');
    expect(expandVariables('${env:NOPE}x', ctx)).toBe('x');
    expect(expandVariables('a~/b', ctx)).toBe('a~/b');
  });
});

describe('serverExecutable', () => {
  it('runs the tritonlens CLI module with serve, after fixed interpreter arguments', () => {
    expect(serverExecutable({ command: ['/p/python', '-I'], source: 'setting' })).toEqual({
      command: '/p/python',
      args: ['-I', '-m', 'tritonlens.server.cli', 'serve'],
    });
  });
  it('describes where the interpreter came from', () => {
    expect(describeInterpreter({ command: ['python3'], source: 'default' })).toBe('python3 (default)');
  });
});

describe('hasInterpreterSetting', () => {
  // The client skips asking the Python extension exactly when the setting would win over its answer.
  it.each([
    [['/venv/bin/python'], true],
    ['/x/python', true],
    [[42, '/y/python'], true],
    [[], false],
    [['  '], false],
    ['', false],
    [undefined, false],
    [42, false],
  ])('%j -> %s, as resolveInterpreter decides', (setting, expected) => {
    expect(hasInterpreterSetting(setting)).toBe(expected);
    expect(resolveInterpreter(setting, ['/from/python-ext']).source === 'setting').toBe(expected);
  });
});
