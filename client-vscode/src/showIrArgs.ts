// Arguments of tritonlens.showIr: an object {uri, kernel, stage, line} or positional [uri, kernel, stage, line]
// (as a hover's command link writes them). `line` is 1-based like the server's findings.

export interface ShowIrArgs {
  uri?: string;
  kernel?: string;
  stage?: string;
  line?: number;
}

export function parseShowIrArgs(args: unknown[]): ShowIrArgs {
  const first = args[0];
  const raw: Record<string, unknown> =
    first && typeof first === 'object' && !Array.isArray(first)
      ? (first as Record<string, unknown>)
      : { uri: args[0], kernel: args[1], stage: args[2], line: args[3] };
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const line = typeof raw.line === 'number' && Number.isInteger(raw.line) && raw.line >= 1 ? raw.line : undefined;
  return { uri: str(raw.uri), kernel: str(raw.kernel), stage: str(raw.stage), line };
}
