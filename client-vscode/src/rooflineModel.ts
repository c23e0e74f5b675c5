// The roofline view's page: the server's SVG chart (tritonlens/roofline), or why there is none. No vscode imports.

export interface RooflineAnswer {
  svg?: string;
  why?: string;
}

export function parseRoofline(raw: unknown): RooflineAnswer {
  if (!raw || typeof raw !== 'object') return { why: 'the server returned no roofline' };
  const r = raw as Record<string, unknown>;
  return {
    svg: typeof r.svg === 'string' && r.svg.trimStart().startsWith('<svg') ? r.svg : undefined,
    why: typeof r.why === 'string' && r.why ? r.why : undefined,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** A page without scripts (the webview runs none): the chart, then the reason when launches were not placed. */
export function rooflineHtml(answer: RooflineAnswer, file: string): string {
  const body = answer.svg
    ? `<div class="chart">${answer.svg}</div>`
    : `<p class="why">No roofline for ${escapeHtml(file)}.</p>`;
  const why = answer.why ? `<p class="why">${escapeHtml(answer.why)}</p>` : '';
  return [
    '<!DOCTYPE html><html><head><meta charset="utf-8">',
    // no scripts, no remote content: the SVG is inline and styles are local
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;">`,
    '<style>body{background:#fff;color:#222;font-family:sans-serif;padding:8px}.why{color:#555}.chart svg{max-width:100%;height:auto}</style>',
    `<title>Roofline: ${escapeHtml(file)}</title></head><body>`,
    body,
    why,
    '</body></html>',
  ].join('\n');
}
