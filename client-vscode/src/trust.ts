// Workspace trust: VS Code's restricted mode. In an untrusted workspace the server runs level 1 only (it reads
// the text; nothing is imported or compiled) and settings that name executables, runner URLs or key variables
// count only when the user set them (user or machine scope), never from the workspace's own settings files.

/** Settings of the tritonlens section that only user (or machine) scope may set in an untrusted workspace. */
export const RESTRICTED_SETTINGS = ['interpreter', 'runners', 'llm'] as const;

/** What `initializationOptions` tells the server about trust. */
export function trustOption(isTrusted: boolean): { workspaceTrust: 'trusted' | 'untrusted' } {
  return { workspaceTrust: isTrusted ? 'trusted' : 'untrusted' };
}

/** The scopes of one setting, as `WorkspaceConfiguration.inspect` gives them. */
export interface SettingScopes {
  defaultValue?: unknown;
  globalValue?: unknown;
}

/** The value a setting may have: any scope's when trusted, else the user's (or the default). */
export function trustedValue(isTrusted: boolean, merged: unknown, scopes: SettingScopes | undefined): unknown {
  if (isTrusted) return merged;
  return scopes?.globalValue !== undefined ? scopes.globalValue : scopes?.defaultValue;
}

/** A `tritonlens` section (as sent for workspace/configuration) with restricted keys from user scope only. */
export function restrictSection(
  section: unknown,
  isTrusted: boolean,
  inspect: (key: string) => SettingScopes | undefined,
): unknown {
  if (isTrusted || section === null || typeof section !== 'object' || Array.isArray(section)) return section;
  const out: Record<string, unknown> = { ...(section as Record<string, unknown>) };
  for (const key of RESTRICTED_SETTINGS) {
    const value = trustedValue(false, out[key], inspect(key));
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out;
}
