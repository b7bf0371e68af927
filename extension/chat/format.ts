// Markdown for the participant's /sessions and /stats answers (pure).
import type { SessionInfo } from '../../contract/sessions.js';
import type { Metrics } from '../../contract/metrics.js';
import { fmtBytes } from '../../contract/units.js';

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function sessionsMarkdown(list: SessionInfo[]): string {
  if (!list.length) return 'No saved sessions yet. Save this conversation with `/save NAME`.';
  const rows = list.map((s) => `| ${cell(s.name)} | ${s.tokens ?? '–'} | ${fmtBytes(s.bytes)} | ${cell(s.model ?? '–')} | ${s.savedAt ? new Date(s.savedAt).toISOString().replace('T', ' ').slice(0, 16) : '–'} |`);
  return ['| name | tokens | size | model | saved |', '|---|---:|---:|---|---|', ...rows].join('\n');
}

export function statsMarkdown(m: Metrics): string {
  const last = m.requests.at(-1);
  const fmt = (v: number | null, unit = ''): string => (v === null ? '–' : `${Number.isInteger(v) ? v : v.toFixed(1)}${unit}`);
  const lines = [
    `**Server:** ${m.state} · running ${m.running} · queued ${m.queued}`,
    `**Slots:** ${m.slots.map((s) => `#${s.slot} ${s.state} (${s.heldTokens} tok)`).join(', ') || '–'}`,
    `**Conversation cache:** ${m.cache.parked} parked · ${fmtBytes(m.cache.bytes)} of ${fmtBytes(m.cache.budget)} · hits ${m.cache.hits} · misses ${m.cache.misses} · evictions ${m.cache.evictions}`,
    `**Engines:** ${m.engines.map((e) => `replica ${e.replica} ${e.alive ? 'alive' : 'down'} (epoch ${e.epoch}, restarts ${e.restarts})`).join(', ') || '–'}`,
  ];
  if (last) {
    lines.push(`**Last request:** prompt ${fmt(last.promptTokens)} tok (${fmt(last.reusedTokens)} reused) in ${fmt(last.promptMs, ' ms')}, `
      + `output ${fmt(last.outputTokens)} tok at ${fmt(last.decodeTokS, ' tok/s')}, finish ${last.finish ?? '–'}`);
  }
  return lines.join('  \n');
}
