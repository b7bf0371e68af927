// The agents bench's request shaping: Codex's request with its namespaces' functions as plain
// function tools (what both servers then read alike), from the recorded session.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionsOnly, loadAgentSession } from '../../tools/bench-compare/agents-replay.js';

const root = join(import.meta.dirname, '..', '..');

describe('functionsOnly', () => {
  it('puts each namespace member in its place as a function under its qualified name, and leaves hosted tools out', () => {
    const s = loadAgentSession(root, 'codex');
    const body = s.turns[0]!;
    const flat = functionsOnly(s.dialect, body)!;
    const names = flat.tools.map((t: { name: string }) => t.name);
    expect(flat.tools.every((t: { type: string }) => t.type === 'function')).toBe(true);
    const ns = body.tools.find((t: { type: string }) => t.type === 'namespace');
    const members = ns.tools.map((m: { name: string }) => `${ns.name}__${m.name}`);
    // In the namespace's place, between the functions declared before and after it.
    const at = body.tools.indexOf(ns);
    expect(names.slice(at, at + members.length)).toEqual(members);
    expect(names.length).toBe(body.tools.filter((t: { type: string }) => t.type === 'function').length + members.length);
    expect(names).not.toContain('web_search');
    // The rest of the request is as recorded.
    expect(flat.input).toBe(body.input);
  });

  it('is null for a request without namespaces and for the other dialects', () => {
    for (const client of ['claude', 'opencode', 'continue'] as const) {
      const s = loadAgentSession(root, client);
      expect(functionsOnly(s.dialect, s.turns[0]!)).toBeNull();
    }
    const s = loadAgentSession(root, 'codex');
    expect(functionsOnly(s.dialect, { ...s.turns[0]!, tools: s.turns[0]!.tools.filter((t: { type: string }) => t.type !== 'namespace') })).toBeNull();
  });
});
