// Workspace trust (issue 21, item 4): restricted mode is declared "limited", every setting naming an executable,
// a runner URL or a token/key variable is restricted, and the server hears the trust state.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESTRICTED_SETTINGS, restrictSection, trustedValue, trustOption } from '../../src/trust';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

describe('workspace trust', () => {
  it('declares limited support with the restricted settings', () => {
    const untrusted = pkg.capabilities?.untrustedWorkspaces;
    expect(untrusted?.supported).toBe('limited');
    expect([...untrusted.restrictedConfigurations].sort()).toEqual(RESTRICTED_SETTINGS.map((k) => `tritonlens.${k}`).sort());
  });

  it('restricts every setting whose description names an interpreter, URL, token or key', () => {
    const props = pkg.contributes.configuration.properties as Record<string, unknown>;
    const sensitive = Object.entries(props)
      .filter(([, schema]) => /\binterpreter\b|\burl\b|token|api ?key|keyEnv|\bpython\b/i.test(JSON.stringify(schema)))
      .map(([key]) => key);
    expect(sensitive.length).toBeGreaterThan(0);
    for (const key of sensitive) expect(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations).toContain(key);
  });

  it('tells the server the trust state', () => {
    expect(trustOption(false)).toEqual({ workspaceTrust: 'untrusted' });
    expect(trustOption(true)).toEqual({ workspaceTrust: 'trusted' });
    const server = readFileSync(join(root, 'src', 'server.ts'), 'utf8');
    expect(server).toMatch(/trustOption\(vscode\.workspace\.isTrusted\)/);
  });

  it("keeps only the user's value of a restricted setting when untrusted", () => {
    const merged = { target: 'cuda', runners: { local: { cuda: './evilpy' } }, llm: { apiKeyEnv: 'AWS_SECRET' }, interpreter: ['./py'] };
    const scopes: Record<string, { globalValue?: unknown; defaultValue?: unknown }> = {
      runners: { globalValue: { local: { cuda: '/home/me/.venv/bin/python' } }, defaultValue: {} },
      llm: { defaultValue: {} },
      interpreter: { defaultValue: [] },
    };
    const restricted = restrictSection(merged, false, (key) => scopes[key]);
    expect(restricted).toEqual({ target: 'cuda', runners: { local: { cuda: '/home/me/.venv/bin/python' } }, llm: {}, interpreter: [] });
    expect(restrictSection(merged, true, (key) => scopes[key])).toBe(merged);
    expect(trustedValue(false, ['./py'], { defaultValue: [] })).toEqual([]);
    expect(trustedValue(true, ['./py'], { defaultValue: [] })).toEqual(['./py']);
  });
});
