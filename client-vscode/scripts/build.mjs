// Bundles the extension into one file, dist/extension.js, so the .vsix needs no node_modules.
import { build } from 'esbuild';

const production = process.argv.includes('--production');

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  platform: 'node',
  target: 'node18',
  format: 'cjs',
  external: ['vscode'], // provided by the editor at run time
  // When the host began evaluating the bundle: activate() logs it, so the e2e can tell module load from the rest.
  banner: { js: 'var __tritonlensLoadStart = Date.now();' },
  minify: production,
  sourcemap: !production,
  logLevel: 'info',
});
