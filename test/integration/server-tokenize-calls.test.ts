// One engine round trip tokenizes an infill request: its prefix (and the prefix's window),
// suffix, cursor line, repo header and every extra file go in one tokenizeParts call; nothing
// else is tokenized on the engine host's JS thread for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, type Running } from './server-helpers.js';

let srv: Running;
const calls: string[] = [];

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({ vocab: 'starcoder' }), { slots: 1, ctx: 2048 });
  const engine = srv.server.engines[0]! as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const name of ['tokenize', 'tokenizeSegments', 'tokenizeParts', 'detokenize'] as const) {
    const real = engine[name]!.bind(engine);
    engine[name] = (...args: unknown[]) => { calls.push(name); return real(...args); };
  }
});
afterAll(async () => { await srv?.close(); });

describe('infill tokenization', () => {
  it('is one engine call per request, window search included', async () => {
    const lines = Array.from({ length: 400 }, (_, i) => `let value_${i} = compute(${i}, "${'x'.repeat(i % 7)}");`);
    const body = {
      input_prefix: `${lines.join('\n')}\n`, input_suffix: '\n}\n', prompt: 'let next = ',
      input_extra: [{ filename: 'a.js', text: 'export const a = 1;\n' }, { filename: 'b.js', text: 'export const b = 2;\n' }],
      max_tokens: 2, temperature: 0,
    };
    calls.length = 0;
    const r = await json(srv.port, 'POST', '/v1/infill', body);
    expect(r.status).toBe(200);
    expect(r.body.truncated).toBe(true); // the 400-line prefix was windowed
    expect(calls).toEqual(['tokenizeParts']);
  });
});
