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
  minify: production,
  sourcemap: !production,
  logLevel: 'info',
});
