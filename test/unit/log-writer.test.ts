import { describe, expect, it } from 'vitest';
import { createLogger, formatLine } from '../../backend/log/logger.js';
import { QueuedWriter } from '../../backend/log/queued-writer.js';

type Cb = (err: NodeJS.ErrnoException | null, written: number) => void;

describe('QueuedWriter', () => {
  it('says how many lines it dropped before the next batch, when asked to (the engine host)', () => {
    const pending: Array<{ data: Buffer; cb: Cb }> = [];
    const w = new QueuedWriter({ fd: 99, maxQueuedLines: 1, dropNote: (n) => `${n} dropped`, writeImpl: (_fd, data, cb) => { pending.push({ data, cb }); } });
    w.writeLine('a'); // in flight
    w.writeLine('b');
    w.writeLine('c'); // dropped
    w.writeLine('d'); // dropped
    pending[0]!.cb(null, pending[0]!.data.length);
    expect(pending[1]!.data.toString()).toBe('2 dropped\nb\n');
  });

  it('never blocks: a reader that does not read costs dropped lines, not a stalled caller', () => {
    const pending: Array<{ data: Buffer; cb: Cb }> = [];
    const w = new QueuedWriter({ fd: 99, maxQueuedLines: 3, writeImpl: (_fd, data, cb) => { pending.push({ data, cb }); } });
    w.writeLine('a'); // in flight
    for (const l of ['b', 'c', 'd', 'e', 'f']) w.writeLine(l);
    expect(pending).toHaveLength(1);
    expect(w.queued).toBe(3);
    expect(w.dropped).toBe(2);
    // The reader catches up: the queue goes out in one write, in order.
    pending[0]!.cb(null, pending[0]!.data.length);
    expect(pending).toHaveLength(2);
    expect(pending[1]!.data.toString()).toBe('b\nc\nd\n');
  });

  it('finishes partial writes and retries EAGAIN; a gone reader drops the rest', async () => {
    const out: string[] = [];
    let calls = 0;
    const w = new QueuedWriter({
      fd: 99,
      writeImpl: (_fd, data, cb) => {
        calls++;
        if (calls === 1) { cb(Object.assign(new Error('again'), { code: 'EAGAIN' }), 0); return; }
        if (calls === 2) { out.push(data.subarray(0, 2).toString()); cb(null, 2); return; }
        if (calls === 3) { out.push(data.toString()); cb(null, data.length); return; }
        cb(Object.assign(new Error('pipe'), { code: 'EPIPE' }), 0);
      },
    });
    w.writeLine('hello');
    await w.flush(2000);
    expect(out.join('')).toBe('hello\n');
    w.writeLine('lost');
    await w.flush(2000);
    w.writeLine('after');
    expect(w.dropped).toBe(1);
  });
});

describe('logger', () => {
  it('writes text and JSON lines with fields, one record per line', () => {
    const t = new Date('2030-01-02T03:04:05.000Z');
    expect(formatLine('text', t, 'info', 'request', { request: 7, finish: 'stop', note: 'a b' }))
      .toBe('2030-01-02T03:04:05.000Z info  request request=7 finish=stop note="a b"');
    expect(JSON.parse(formatLine('json', t, 'warn', 'x', { replica: 1, skip: undefined })))
      .toEqual({ time: '2030-01-02T03:04:05.000Z', level: 'warn', msg: 'x', replica: 1 });
    expect(formatLine('text', t, 'error', 'two\nlines', {})).not.toContain('\n');
    const lines: string[] = [];
    const log = createLogger({ level: 'info', writer: { writeLine: (l) => lines.push(l), flush: async () => {}, dropped: 0 }, now: () => t });
    log.debug('hidden');
    log.child({ replica: 2 }).info('engine ready', { epoch: 3 });
    expect(lines).toEqual(['2030-01-02T03:04:05.000Z info  engine ready replica=2 epoch=3']);
  });
});
