// Codicons inside the panel (@vscode/codicons, shipped in the VSIX as dist/codicons/: no remote
// content). Icon-only buttons always carry an accessible name and a tooltip.
import { h } from './dom.js';

type Attrs = Record<string, string | number | boolean | undefined | null>;

export function icon(name: string): HTMLElement {
  return h('span', { class: `codicon codicon-${name}`, 'aria-hidden': 'true' });
}

/** A button showing only an icon; `label` is its accessible name and tooltip. */
export function iconButton(name: string, label: string, onClick: () => void, attrs: Attrs = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'icon', 'aria-label': label, title: label, ...attrs }, icon(name));
  if (attrs.class) b.className = `icon ${String(attrs.class)}`;
  b.addEventListener('click', onClick);
  return b;
}

/** A button with an icon before its text. */
export function labelledIconButton(name: string, text: string, onClick: () => void, attrs: Attrs = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs }, icon(name), h('span', {}, text));
  b.addEventListener('click', onClick);
  return b;
}
