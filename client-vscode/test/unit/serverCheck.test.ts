// Runs real interpreters: the repository's .venv (has tritonlens), a missing path, and a Python without it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkServerImportable } from '../../src/serverCheck';

const venvPython = join(__dirname, '..', '..', '..', '.venv', 'bin', 'python');

describe('checkServerImportable', () => {
  it.skipIf(!existsSync(venvPython))('accepts an interpreter that has tritonlens', async () => {
    expect(await checkServerImportable({ command: [venvPython], source: 'setting' })).toBeUndefined();
  });

  it('says the interpreter is missing', async () => {
    const msg = await checkServerImportable({ command: ['/nonexistent/bin/python'], source: 'setting' });
    expect(msg).toMatch(/Python interpreter not found: \/nonexistent\/bin\/python \(from setting tritonlens.interpreter\)/);
  });

  it('says what to install when the module is missing', async () => {
    // -I isolates from the environment and user site, so no tritonlens is importable.
    const msg = await checkServerImportable({ command: [process.env.TRITONLENS_TEST_BARE_PYTHON ?? '/usr/bin/python3', '-I', '-S'], source: 'default' });
    expect(msg).toMatch(/tritonlens is not importable with .*ModuleNotFoundError: No module named 'tritonlens'.*pip install/);
  });
});
