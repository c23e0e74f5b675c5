// package.json must contribute what the client registers and every setting the server reads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_COMMANDS, IR_TARGETS, KERNELS_VIEW, SERVER_COMMANDS, TARGETS } from '../../src/constants';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const props = pkg.contributes.configuration.properties as Record<string, { enum?: string[]; default?: unknown }>;

describe('package.json', () => {
  it('contributes every client and known server command', () => {
    const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command);
    for (const id of [...CLIENT_COMMANDS, ...SERVER_COMMANDS]) expect(contributed).toContain(id);
  });

  it('shows Optimize kernel in the palette only when the server offers it, and hides the argument-only diff', () => {
    const palette = pkg.contributes.menus.commandPalette as Array<{ command: string; when: string }>;
    const when = (id: string) => palette.find((m) => m.command === id)?.when;
    expect(when('tritonlens.optimizeKernel')).toBe('tritonlens.optimizeKernel.offered');
    expect(when('tritonlens.showCandidateDiff')).toBe('false');
    // every ".offered" key must be one the client sets (commandContextKeys over SERVER_COMMANDS)
    for (const m of palette.filter((m) => m.when.endsWith('.offered'))) expect(SERVER_COMMANDS).toContain(m.command);
  });

  it('contributes the settings of the brief with matching enums', () => {
    for (const key of ['interpreter', 'target', 'select', 'ignore', 'severity', 'debounceMs', 'escalation', 'irTarget', 'runners', 'llm']) {
      expect(props).toHaveProperty(`tritonlens.${key}`);
    }
    expect(props['tritonlens.target'].enum).toEqual([...TARGETS]);
    expect(props['tritonlens.irTarget'].enum).toEqual([...IR_TARGETS]);
  });

  it('contributes every key the language server reads from the tritonlens section', () => {
    // Read the server's own list so a key added there without a client setting fails here.
    let source: string;
    try {
      source = readFileSync(join(root, '..', 'server', 'lsp_config.py'), 'utf8');
    } catch {
      return; // client built outside the tritonlens checkout
    }
    const keys = new Set<string>(['target', 'select', 'ignore', 'severity']);
    for (const m of source.matchAll(/raw\.get\("([A-Za-z]+)"/g)) keys.add(m[1]);
    const passThrough = /PASS_THROUGH\s*=\s*\(([^)]*)\)/.exec(source);
    for (const m of passThrough?.[1].matchAll(/"([A-Za-z]+)"/g) ?? []) keys.add(m[1]);
    expect(keys.size).toBeGreaterThan(5);
    for (const key of keys) expect(props, `setting tritonlens.${key}`).toHaveProperty(`tritonlens.${key}`);
  });

  it('declares the kernels view, a Node-20-compatible engine and the bundled entry point', () => {
    expect(pkg.contributes.views.explorer.map((v: { id: string }) => v.id)).toContain(KERNELS_VIEW);
    expect(pkg.engines.vscode).toBe('^1.82.0');
    expect(pkg.main).toBe('./dist/extension.js');
    expect(pkg.activationEvents).toContain('onLanguage:python');
  });
});
