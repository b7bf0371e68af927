// Compaction in the conversation view: the marker where an agent conversation was compacted
// ("12 tool results elided; steps 1–9 summarised", opening to the summary) and the meter of the
// context the agent conversation uses, with the Compact action beside it.
import type { AgentCompactionView, AgentContextView } from '../../contract/agent.js';
import { button, h } from '../dom.js';
import { icon } from '../icons.js';

export function compactionEl(c: AgentCompactionView): HTMLElement {
  const figures = c.before > 0 ? ` (${c.before.toLocaleString()} → ${c.after.toLocaleString()} tokens)` : '';
  const summary = c.summary ? h('div', { class: 'compaction-summary' }, c.summary) : h('div', { class: 'muted' }, 'Older tool results were replaced by a note naming the call; the agent can run it again.');
  summary.style.whiteSpace = 'pre-wrap'; // CSSOM, allowed by the CSP (no inline style attributes)
  return h('details', { class: 'agent-compaction', 'data-compaction': c.id },
    h('summary', { class: 'muted' }, icon('fold'), h('span', {}, `Context compacted: ${c.label}${figures}`)),
    summary);
}

/** "Context 2,345 / 4,096 tokens" with a bar; the share decides its colour (panel.css). */
export function contextMeterEl(ctx: AgentContextView | null, onCompact: (() => void) | null): HTMLElement | null {
  if (!ctx) return null;
  const share = ctx.ctx ? ctx.used / ctx.ctx : null;
  const text = ctx.ctx ? `Context ${ctx.used.toLocaleString()} / ${ctx.ctx.toLocaleString()} tokens` : `Context ${ctx.used.toLocaleString()} tokens`;
  const level = share === null ? '' : share >= 0.85 ? ' high' : share >= 0.5 ? ' mid' : '';
  const tip = ctx.ctx
    ? `The agent conversation uses ${Math.round((share ?? 0) * 100)}% of the model's context per slot; it is compacted above 85% (older tool results, then a summary).`
    : 'The server does not say its context per slot, so the conversation is not compacted.';
  return h('div', { class: `agent-context${level}`, role: 'status', 'aria-label': text, title: tip },
    share !== null ? h('meter', { min: 0, max: ctx.ctx ?? 1, low: Math.round((ctx.ctx ?? 1) * 0.5), high: Math.round((ctx.ctx ?? 1) * 0.85), value: ctx.used }) : null,
    h('span', {}, text),
    onCompact ? button('Compact', onCompact, { class: 'compact', title: 'Summarise the conversation now to free context (the summary replaces the earlier steps)' }) : null);
}
