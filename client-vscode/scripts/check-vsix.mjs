// Packaging test: the .vsix (a zip) must hold the bundled client and its metadata, and nothing from the
// development tree (sources, tests, node_modules, source maps). Usage: node scripts/check-vsix.mjs <file.vsix>
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

/** Entries of a zip file from its central directory: name -> {method, compressedSize, offset}. */
function readZip(buf) {
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip file (no end of central directory)');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error('corrupt central directory');
    const method = buf.readUInt16LE(p + 10);
    const compressedSize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const offset = buf.readUInt32LE(p + 42);
    entries.set(buf.toString('utf8', p + 46, p + 46 + nameLen), { method, compressedSize, offset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

function readEntry(buf, entry) {
  const start = entry.offset + 30 + buf.readUInt16LE(entry.offset + 26) + buf.readUInt16LE(entry.offset + 28);
  const data = buf.subarray(start, start + entry.compressedSize);
  return entry.method === 8 ? inflateRawSync(data) : data;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/check-vsix.mjs <file.vsix>');
  process.exit(2);
}
const buf = readFileSync(file);
const entries = readZip(buf);
const names = [...entries.keys()];
const problems = [];

const required = [
  'extension.vsixmanifest',
  'extension/package.json',
  'extension/dist/extension.js',
  'extension/readme.md',
  'extension/LICENSE.txt',
];
for (const name of required) if (!entries.has(name)) problems.push(`missing ${name}`);

const forbidden = [/^extension\/src\//, /\.ts$/, /^extension\/test\//, /node_modules\//, /\.map$/, /tsconfig/, /vitest/, /\.vsix$/, /^extension\/scripts\//];
for (const name of names) {
  if (forbidden.some((re) => re.test(name))) problems.push(`development file shipped: ${name}`);
}

if (entries.has('extension/package.json')) {
  const pkg = JSON.parse(readEntry(buf, entries.get('extension/package.json')).toString('utf8'));
  if (pkg.main !== './dist/extension.js') problems.push(`package.json main is ${pkg.main}`);
  if (!pkg.contributes?.commands?.some((c) => c.command === 'tritonlens.restart')) problems.push('package.json lacks the restart command');
}
if (entries.has('extension/dist/extension.js')) {
  const js = readEntry(buf, entries.get('extension/dist/extension.js')).toString('utf8');
  // Bundled: the language client is inside, and nothing but the editor's own module is required at run time.
  if (!js.includes('tritonlens.server.cli')) problems.push('extension.js does not start the tritonlens server module');
  const requires = new Set([...js.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
  const external = [...requires].filter((r) => r !== 'vscode' && !r.startsWith('node:') && !isBuiltin(r));
  if (external.length > 0) problems.push(`extension.js requires unbundled modules: ${external.join(', ')}`);
}

function isBuiltin(name) {
  return ['assert', 'buffer', 'child_process', 'crypto', 'events', 'fs', 'net', 'os', 'path', 'stream', 'url', 'util'].includes(name);
}

if (problems.length > 0) {
  console.error(`${file}: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`${file}: ok (${names.length} files: ${names.join(', ')})`);
