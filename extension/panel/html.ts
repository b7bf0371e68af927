// The panel's HTML shell: strict CSP (scripts only with this load's nonce, styles and images
// only from the extension's own files), no remote content. Pure, so the CSP is unit-tested.
import { randomBytes } from 'node:crypto';

export function makeNonce(): string {
  // Hex: 32 characters every time (base64 with '+' and '/' dropped was shorter now and then).
  return randomBytes(16).toString('hex');
}

export function panelHtml(o: { cspSource: string; nonce: string; scriptUri: string; styleUris: string[]; title: string }): string {
  const csp = [
    "default-src 'none'",
    `style-src ${o.cspSource}`,
    `img-src ${o.cspSource} data:`,
    `font-src ${o.cspSource}`,
    `script-src 'nonce-${o.nonce}'`,
    "connect-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
  const esc = (s: string): string => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${o.styleUris.map((u) => `<link rel="stylesheet" href="${esc(u)}">`).join('\n')}
<title>${esc(o.title)}</title>
</head>
<body>
<div id="app" aria-live="off"><p class="muted">Loading the Strata panel…</p></div>
<script nonce="${o.nonce}" src="${esc(o.scriptUri)}"></script>
</body>
</html>`;
}
