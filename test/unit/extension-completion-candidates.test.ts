// Several inline completion candidates from one streamed request: the first finished shows while
// the others are still coming (the scripted server holds them until the test lets them go), the
// full list (trimmed, no repeats) is cached for cycling, and a request running for the same text
// is joined instead of repeated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrataApiError, StrataClient } from '../../extension/client/client.js';
import { parseInfillChunk } from '../../extension/client/normalize.js';
import { CompletionCache } from '../../extension/completion/cache.js';
import { CandidateRequests } from '../../extension/completion/candidate-requests.js';
import { CandidateCollector, refusesCandidates, uniqueCandidates } from '../../extension/completion/candidates.js';
import type { InfillRequest, InfillStreamEvent } from '../../extension/client/types.js';
import { ScriptedModelServer } from '../helpers/scripted-model-server.js';

const req = (n: number): InfillRequest => ({ prefix: 'def mul(a, b):\n    return', suffix: '\n', extra: [], maxTokens: 32, maxPredictMs: 1000, supersedeKey: 'doc', n });

describe('candidate parts', () => {
  it('reads OpenAI choices by index and llama-server\'s content-only events', () => {
    expect(parseInfillChunk({ choices: [{ index: 1, text: 'a', finish_reason: null }, { index: 0, text: '', finish_reason: 'stop' }] }))
      .toEqual([{ type: 'text', index: 1, text: 'a' }, { type: 'end', index: 0, finishReason: 'stop' }]);
    expect(parseInfillChunk({ content: 'x', stop: false })).toEqual([{ type: 'text', index: 0, text: 'x' }]);
    expect(parseInfillChunk({ content: '', stop: true, stop_type: 'eos' })).toEqual([{ type: 'end', index: 0, finishReason: 'eos' }]);
  });

  it('collects pieces per candidate and remembers the order they finished in', () => {
    const c = new CandidateCollector();
    const evs: InfillStreamEvent[] = [
      { type: 'text', index: 0, text: ' a' }, { type: 'text', index: 1, text: ' b' }, { type: 'text', index: 0, text: ' + b' },
      { type: 'end', index: 1, finishReason: 'stop' }, { type: 'end', index: 1, finishReason: 'stop' }, { type: 'end', index: 0, finishReason: 'stop' },
    ];
    expect(evs.map((e) => c.push(e))).toEqual([undefined, undefined, undefined, 1, undefined, 0]);
    expect(c.done()).toEqual([' b', ' a + b']);
    expect(c.all()).toEqual([' a + b', ' b']);
  });

  it('drops empty and repeated candidates, keeping the order', () => {
    expect(uniqueCandidates(['x', '', 'y', 'x', '  ', 'z', 'y'])).toEqual(['x', 'y', 'z']);
  });

  it('the cache keeps every candidate and serves the rests of those the user typed along', () => {
    const cache = new CompletionCache();
    cache.putAll('p ', '', ['a * b', 'a + b', 'b - a']);
    expect(cache.getAll('p ', '')).toEqual(['a * b', 'a + b', 'b - a']);
    expect(cache.get('p ', '')).toBe('a * b');
    expect(cache.getAll('p a', '')).toEqual([' * b', ' + b']);
    expect(cache.getAll('p a +', '')).toEqual([' b']);
    expect(cache.getAll('p c', '')).toBeUndefined();
    cache.putAll('q', '', []);
    expect(cache.get('q', '')).toBe('');
  });
});

describe('candidates over one streamed request (scripted server)', () => {
  const server = new ScriptedModelServer({ infill: () => ({ candidates: [' a * b', ' a + b', ' a * b  ', ' b'], holdOthers: true }) });
  let client: StrataClient;
  beforeAll(async () => { client = new StrataClient({ baseUrl: await server.start(), models: { completion: 'coder' } }); });
  afterAll(() => server.close());

  it('shows the first finished candidate while the others are held, then caches all of them from the one request', async () => {
    const letGo = server.holdCandidates();
    const cache = new CompletionCache();
    const requests = new CandidateRequests(cache);
    const r = req(3);
    const run = requests.start(r.prefix, r.suffix, client.infillStream(r, new AbortController().signal), (s) => s.trimEnd());
    expect(await run.first).toBe(' a * b');
    // The others have not been sent yet: nothing is cached, and the same text joins this request.
    expect(cache.getAll(r.prefix, r.suffix)).toBeUndefined();
    expect(requests.pending(r.prefix, r.suffix)).toBe(requests.pending(r.prefix, r.suffix));
    expect(requests.pending(r.prefix, 'other')).toBeUndefined();
    letGo();
    // n = 3: the server was asked for three; the third repeats the first once trimmed.
    expect(await requests.pending(r.prefix, r.suffix)!.all).toEqual([' a * b', ' a + b']);
    expect(cache.getAll(r.prefix, r.suffix)).toEqual([' a * b', ' a + b']);
    expect(requests.pending(r.prefix, r.suffix)).toBeUndefined();
    const sent = server.of('/v1/infill');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ model: 'coder', n: 3, stream: true, supersede_key: 'doc', input_prefix: r.prefix });
  });

  it('an abort before the first candidate fails the first; after it, the list is what finished so far (not cached)', async () => {
    const letGo = server.holdCandidates();
    const cache = new CompletionCache();
    const requests = new CandidateRequests(cache);
    const ac = new AbortController();
    const r = req(3);
    const run = requests.start(r.prefix, r.suffix, client.infillStream(r, ac.signal), (s) => s);
    expect(await run.first).toBe(' a * b');
    ac.abort();
    expect(await run.all).toEqual([' a * b']);
    expect(cache.getAll(r.prefix, r.suffix)).toBeUndefined();
    letGo();
    const early = new AbortController();
    early.abort();
    const none = requests.start(r.prefix, r.suffix, client.infillStream(r, early.signal), (s) => s);
    await expect(none.first).rejects.toThrow();
    await none.all;
  });

  it('a first candidate that trims to nothing waits for the next; a server refusing n is recognised', async () => {
    const blank = new ScriptedModelServer({ infill: () => ({ candidates: ['   ', ' x'], holdOthers: false }) });
    const c = new StrataClient({ baseUrl: await blank.start() });
    const r = req(2);
    const run = new CandidateRequests(new CompletionCache()).start(r.prefix, r.suffix, c.infillStream(r, new AbortController().signal), (s) => s.trim());
    expect(await run.first).toBe('x');
    await blank.close();

    const refusing = new ScriptedModelServer({ refuseN: true });
    const old = new StrataClient({ baseUrl: await refusing.start() });
    const err = await (async () => { for await (const _ of old.infillStream(r, new AbortController().signal)) { /* none */ } })().catch((e: unknown) => e);
    await refusing.close();
    expect(err).toBeInstanceOf(StrataApiError);
    expect(refusesCandidates(err)).toBe(true);
    expect(refusesCandidates(new StrataApiError('max_tokens: too big', 400, 'invalid_value', 'max_tokens'))).toBe(false);
  });
});
