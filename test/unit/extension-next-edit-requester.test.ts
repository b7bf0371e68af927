// The next-edit request path against a scripted server (the real client over HTTP): what is sent,
// the hunks of the answer, a newer edit superseding the request in flight (its connection closed),
// an answer for a document that changed meanwhile dropped, a dismiss, and a server without the route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrataApiError, StrataClient } from '../../extension/client/client.js';
import type { NextEditResult } from '../../extension/client/types.js';
import { EditHistory } from '../../extension/next-edit/edit-history.js';
import { planRequest, DEFAULT_LIMITS, type DocumentView } from '../../extension/next-edit/request.js';
import { NextEditRequester, type NextEditClient } from '../../extension/next-edit/requester.js';
import { checkNextEditRequest, renameAnswer, renamedWord, ScriptedModelServer } from '../helpers/scripted-model-server.js';

const SRC = 'import math\n\ndef area(width, height):\n    """Area of a rectangle."""\n    return width * height\n\n\ndef show(width, height):\n    print(area(width, height))\n';

/** A document the tests edit: its history and a view with a version that counts the edits. */
function editedDoc(history: EditHistory, key = 'file:///w/geo.py') {
  const hist = history.open(key, 'geo.py', SRC);
  let version = 1;
  const view = (): DocumentView => ({ key, path: 'geo.py', languageId: 'python', version, lineCount: hist.lineCount, line: (i) => hist.line(i) });
  const edit = (line: number, from: number, to: number, text: string): void => {
    hist.apply({ startLine: line, startCharacter: from, endLine: line, endCharacter: to, text });
    version++;
  };
  return { view, edit, version: () => version };
}

const limits = { ...DEFAULT_LIMITS, regionLines: 24 };

describe('next-edit requests against a scripted server', () => {
  let hold: { promise: Promise<void>; release: () => void } | undefined;
  const server = new ScriptedModelServer({ nextEdit: renameAnswer, holdNextEdit: () => hold?.promise ?? Promise.resolve() });
  let client: StrataClient;
  beforeAll(async () => { client = new StrataClient({ baseUrl: await server.start(), models: { nextEdit: 'zeta' } }); });
  afterAll(() => server.close());

  it('sends the region, the cursor and the edit as a diff, and offers the rest of the rename as hunks in order', async () => {
    const history = new EditHistory();
    const d = editedDoc(history);
    d.edit(2, 9, 14, 'w'); // def area(w, height):
    const cursor = { line: 2, character: 10 };
    const out = await new NextEditRequester().ask(client, 0, () => planRequest(d.view(), cursor, history, limits, 'file:///w/geo.py'), d.version);
    const sent = server.of('/v1/edits/next').at(-1)!.body;
    const body = checkNextEditRequest(sent);
    expect(sent.model).toBe('zeta');
    expect(body.file).toBe('geo.py');
    expect(body.language).toBe('python');
    expect(body.supersede_key).toBe('file:///w/geo.py');
    // The whole (short) file: before + region + after, the region 24 lines at most around the cursor.
    expect(`${body.before}${body.region}${body.after}`).toBe(SRC.replace('area(width', 'area(w'));
    expect(body.start_of_file).toBe(true);
    expect(body.region.slice(body.cursor!, body.cursor! + 9)).toBe(', height)');
    expect(body.edits).toEqual([{ file: 'geo.py', diff: '@@ -1,5 +1,5 @@\n import math\n \n-def area(width, height):\n+def area(w, height):\n     """Area of a rectangle."""\n     return width * height' }]);
    expect(renamedWord(body.edits![0]!.diff)).toEqual(['width', 'w']);
    expect(out.kind).toBe('proposal');
    if (out.kind !== 'proposal') return;
    expect(out.hunks).toEqual([
      { startLine: 4, oldLines: ['    return width * height'], newLines: ['    return w * height'] },
      { startLine: 7, oldLines: ['def show(width, height):', '    print(area(width, height))'], newLines: ['def show(w, height):', '    print(area(w, height))'] },
    ]);
  });

  it('a newer edit supersedes the request in flight: it ends "superseded" and its connection is closed', async () => {
    const history = new EditHistory();
    const d = editedDoc(history);
    const requester = new NextEditRequester();
    d.edit(2, 9, 14, 'w');
    let release!: () => void;
    hold = { promise: new Promise<void>((r) => { release = r; }), release: () => release() };
    const before = server.of('/v1/edits/next').length;
    const plan = () => planRequest(d.view(), { line: 2, character: 10 }, history, limits, 'k');
    const first = requester.ask(client, 0, plan, d.version);
    await server.waitFor('/v1/edits/next', before + 1);
    hold = undefined; // the second is answered at once
    d.edit(2, 10, 10, 'i'); // def area(wi, height):
    const second = await requester.ask(client, 0, plan, d.version);
    expect(await first).toEqual({ kind: 'superseded' });
    release();
    const firstReq = server.of('/v1/edits/next')[before]!;
    await expect.poll(() => firstReq.aborted, { timeout: 30_000 }).toBe(true);
    expect(second.kind).toBe('proposal');
    if (second.kind === 'proposal') expect(second.hunks[0]!.newLines).toEqual(['    return wi * height']);
  });

  it('a wait superseded or dismissed sends nothing; an answer for a changed document is dropped', async () => {
    const history = new EditHistory();
    const d = editedDoc(history);
    d.edit(2, 9, 14, 'w');
    const requester = new NextEditRequester();
    const plan = () => planRequest(d.view(), { line: 2, character: 10 }, history, limits, 'k');
    const before = server.of('/v1/edits/next').length;
    const waiting = requester.ask(client, 60_000, plan, d.version);
    requester.cancel(); // Esc, or another editor
    expect(await waiting).toEqual({ kind: 'superseded' });
    expect(server.of('/v1/edits/next')).toHaveLength(before);

    let release!: () => void;
    hold = { promise: new Promise<void>((r) => { release = r; }), release: () => release() };
    const stale = requester.ask(client, 0, plan, d.version);
    await server.waitFor('/v1/edits/next', before + 1);
    d.edit(0, 0, 0, '#'); // typed somewhere the request does not see (no newer request made)
    release();
    hold = undefined;
    expect(await stale).toEqual({ kind: 'stale' });
  });

  it('nothing to follow: no request; a server without the route: a 404 the caller sees', async () => {
    const history = new EditHistory();
    const d = editedDoc(history);
    expect(planRequest(d.view(), { line: 0, character: 0 }, history, limits, 'k')).toBeUndefined();
    const bare = new ScriptedModelServer();
    const other = new StrataClient({ baseUrl: await bare.start() });
    d.edit(2, 9, 14, 'w');
    const err = await new NextEditRequester().ask(other, 0, () => planRequest(d.view(), { line: 2, character: 10 }, history, limits, 'k'), d.version).catch((e: unknown) => e);
    await bare.close();
    expect(err).toBeInstanceOf(StrataApiError);
    expect((err as StrataApiError).status).toBe(404);
  });
});

describe('NextEditRequester outcomes', () => {
  const fake = (result: Partial<NextEditResult>): NextEditClient => ({
    nextEdit: async (req) => ({ region: req.region, outcome: 'unchanged', finishReason: 'stop', completionTokens: 1, acceptedPredictionTokens: 1, rejectedPredictionTokens: 0, ...result }),
  });
  it('an answer equal to the region or unreadable is nothing; one cut by max_tokens is not offered', async () => {
    const history = new EditHistory();
    const d = editedDoc(history);
    d.edit(2, 9, 14, 'w');
    const plan = () => planRequest(d.view(), { line: 2, character: 10 }, history, limits, 'k');
    expect(await new NextEditRequester().ask(fake({}), 0, plan, d.version)).toEqual({ kind: 'nothing' });
    expect(await new NextEditRequester().ask(fake({ outcome: 'unparsed' }), 0, plan, d.version)).toEqual({ kind: 'nothing' });
    expect(await new NextEditRequester().ask(fake({ outcome: 'edited', finishReason: 'length', region: 'x' }), 0, plan, d.version)).toEqual({ kind: 'cut' });
    const superseded: NextEditClient = { nextEdit: async () => { throw new StrataApiError('superseded by a newer request', 409, 'superseded'); } };
    expect(await new NextEditRequester().ask(superseded, 0, plan, d.version)).toEqual({ kind: 'superseded' });
    expect(await new NextEditRequester().ask(fake({}), 0, () => undefined, d.version)).toEqual({ kind: 'skipped' });
  });
});
