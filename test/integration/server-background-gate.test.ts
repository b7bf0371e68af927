// Background work yields to interactive work across one server's models (real engines): an
// embedding request that arrives while a completion streams on another model is answered only
// after that stream ends (--background-wait-ms far away), and at once when nothing streams.
// The schedules, the cap and a queued interactive request are in test/unit/scheduler-gate.test.ts.
import { describe, expect, it } from 'vitest';
import type { ModelSpec } from '../../backend/app/model-specs.js';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, stream, tempDir } from './server-helpers.js';

describe('embedding requests wait for interactive ones (real engines, two models)', () => {
  it('an embedding arriving while a completion streams is answered after the stream ends; alone, at once', async () => {
    const models: ModelSpec[] = [
      // A long stream (2000 tokens), so that the embedding surely arrives while it runs.
      { name: 'coder', path: await ensureTestModel({ vocab: 'starcoder' }), role: 'completion', settings: { ctx: 2048, slots: 1 } },
      { name: 'embed', path: await ensureTestModel({ vocab: 'bert-bge', shape: 'embed-bert' }), role: 'embedding', settings: { ctx: 128 } },
    ];
    const sessions = tempDir('strata-gate-sessions-');
    const srv = await startServer(models[0]!.path, { ctx: 256, models, model: models[0]!.path, sessionsDir: sessions.dir, preload: ['coder', 'embed'], backgroundWaitMs: 600_000 });
    try {
      const alone = await json(srv.port, 'POST', '/v1/embeddings', { model: 'embed', input: ['nothing else runs'] });
      expect(alone.status).toBe(200);

      const order: string[] = [];
      const s = stream(srv.port, '/v1/completions', { model: 'coder', prompt: 'def f():', temperature: 0, max_tokens: 2000, ignore_eos: true });
      await s.pieces(1);
      const embedded = json(srv.port, 'POST', '/v1/embeddings', { model: 'embed', input: ['while a completion streams'] }).then((r) => { order.push('embedding'); return r; });
      const ended = s.end.then((r) => { order.push('stream'); return r; });
      expect((await ended).how).toBe('done');
      const r = await embedded;
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      expect(order).toEqual(['stream', 'embedding']);
    } finally {
      await srv.close();
      sessions.remove();
    }
  });
});
