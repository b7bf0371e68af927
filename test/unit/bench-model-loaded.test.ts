// modelLoaded (tools/bench-compare/launch.ts): a bench waits until /health says the model is
// loaded, not merely until the server answers (Strata answers /health and /v1/models while its
// model loads). A real HTTP server on 127.0.0.1 plays a server that loads.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { modelLoaded } from '../../tools/bench-compare/launch.js';

let server: Server | null = null;
afterEach(async () => { await new Promise((r) => server?.close(r) ?? r(undefined)); server = null; });

/** A server whose /health says "loading" (503) for the first `loadingPolls` polls, then "ok". */
async function loadingServer(loadingPolls: number): Promise<{ url: string; polls: () => number }> {
  let polls = 0;
  server = createServer((req, res) => {
    if (req.url !== '/health') { res.writeHead(404).end(); return; }
    polls++;
    const ok = polls > loadingPolls;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ok' : 'loading' }));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, polls: () => polls };
}

describe('modelLoaded', () => {
  it('returns once /health says ok, not before', async () => {
    const s = await loadingServer(3);
    await modelLoaded({ url: s.url, model: '' }, 10_000);
    expect(s.polls()).toBe(4);
  });

  it('gives up with the URL in the message when the model never loads', async () => {
    const s = await loadingServer(Number.MAX_SAFE_INTEGER);
    await expect(modelLoaded({ url: s.url, model: '' }, 600)).rejects.toThrow(`${s.url} did not load its model within 0.6 s`);
  });
});
