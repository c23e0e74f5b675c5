// Before starting the server: can the chosen Python import it? A clear message beats a crash loop.
import { execFile } from 'node:child_process';
import { describeInterpreter, SERVER_MODULE, type Interpreter } from './interpreter';

/** Runs `python -c "import tritonlens.server.cli"`: a missing package gets a clear message, not a crash loop. */
export function checkServerImportable(interpreter: Interpreter, cwd?: string): Promise<string | undefined> {
  const [command, ...rest] = interpreter.command;
  return new Promise((resolve) => {
    execFile(command, [...rest, '-c', `import ${SERVER_MODULE}`], { cwd, timeout: 30000 }, (err, _stdout, stderr) => {
      if (!err) return resolve(undefined);
      const notFound = (err as NodeJS.ErrnoException).code === 'ENOENT';
      resolve(
        notFound
          ? `Python interpreter not found: ${describeInterpreter(interpreter)}. Set "tritonlens.interpreter" or select an interpreter with the Python extension.`
          : `tritonlens is not importable with ${describeInterpreter(interpreter)}: ${stderr.trim().split('\n').pop() ?? err.message}. Install it there (pip install tritonlens, or pip install -e <checkout>) or point "tritonlens.interpreter" at a Python that has it.`,
      );
    });
  });
}
