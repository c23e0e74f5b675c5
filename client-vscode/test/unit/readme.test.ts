// README.md's settings table and package.json's contributed settings must agree: every setting listed, with the
// same default (issue 23: the README said escalation onSave false, target both, irTarget sm_90).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const props = pkg.contributes.configuration.properties as Record<string, { default?: unknown }>;
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** Rows of the table under "## Settings": setting name -> the Default cell's value (JSON, else a plain string). */
function readmeDefaults(): Map<string, unknown> {
  const section = readme.split(/^## Settings\s*$/m)[1]?.split(/^## /m)[0] ?? '';
  const out = new Map<string, unknown>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`(tritonlens\.[\w.]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!name) continue;
    const raw = (cells[2] ?? '').replace(/^`|`$/g, '');
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // a bare word such as auto
    }
    out.set(name, value);
  }
  return out;
}

describe('README settings table', () => {
  const documented = readmeDefaults();

  it('lists every setting package.json contributes, and no other', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(props).sort());
  });

  it('gives each setting the default package.json gives it', () => {
    for (const [name, value] of documented) expect(value, name).toEqual(props[name]?.default);
  });
});
