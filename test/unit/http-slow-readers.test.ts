// The slow-reader watch, model-free: /proc/net/tcp parsing, address keys, and how far behind a
// stream is (the age of its oldest unread byte) from scripted socket figures and kernel queues.
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addressHex, parseProcNetTcp, SlowReaderWatch, socketKey, type KernelQueues, type WatchedStream } from '../../backend/http/slow-readers.js';

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 0100007F:D431 01 00000200:00000000 00:00000000 00000000     0        0 1 1 0 20 4 30 10 -1
   1: 0100007F:D431 0100007F:1F90 01 00000000:0001E000 00:00000000 00000000     0        0 2 1 0 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:D432 01 00000010:00000000 00:00000000 00000000 0 0 3 1 0 20 4 30 10 -1
   1: 00000000000000000000000001000000:1F91 00000000000000000000000001000000:D433 01 00000000:00000020 00:00000000 00000000 0 0 4 1 0 20 4 30 10 -1
`;

describe('kernel queues from /proc/net/tcp', () => {
  it('reads send/receive queues per connection, IPv4, IPv4-mapped and IPv6 alike', () => {
    const q = parseProcNetTcp(TCP6, parseProcNetTcp(TCP));
    const lo = addressHex('127.0.0.1')!;
    expect(lo).toBe('7F000001');
    expect(q.get(socketKey(lo, 8080, lo, 54321))).toEqual({ tx: 0x200, rx: 0 });
    expect(q.get(socketKey(lo, 54321, lo, 8080))).toEqual({ tx: 0, rx: 0x1e000 });
    expect(q.get(socketKey(addressHex('::ffff:127.0.0.1')!, 8080, lo, 54322))).toEqual({ tx: 0x10, rx: 0 });
    const v6 = addressHex('::1')!;
    expect(v6).toBe('00000000000000000000000000000001');
    expect(q.get(socketKey(v6, 8081, v6, 54323))).toEqual({ tx: 0, rx: 0x20 });
    expect(addressHex('fe80::1:2')).toBe('FE800000000000000000000000010002');
    expect(addressHex('1::2::3')).toBeNull();
  });
});

/** A socket whose figures the test sets, as the watch reads them. */
function fakeStream(): { stream: WatchedStream & { cutAt: number | null }; sock: { bytesWritten: number; writableLength: number } } {
  const sock = { bytesWritten: 0, writableLength: 0, destroyed: false, localAddress: '127.0.0.1', localPort: 8080, remoteAddress: '127.0.0.1', remotePort: 50000 };
  const stream = { socket: sock as unknown as Socket, cutAt: null as number | null, cutSlowReader(lag: number) { this.cutAt = lag; } };
  return { stream, sock };
}

describe('SlowReaderWatch', () => {
  it('cuts a stream once its oldest unread byte is older than the bound, counting unread bytes in kernel queues', async () => {
    let now = 1000;
    let queues: KernelQueues = new Map();
    const watch = new SlowReaderWatch({ boundMs: 500, checkMs: 1_000_000, kernelQueues: async () => queues, now: () => now });
    const { stream, sock } = fakeStream();
    const lo = addressHex('127.0.0.1')!;
    // Three writes of 100 bytes at t = 1000, 1100, 1200.
    for (const t of [1000, 1100, 1200]) { now = t; sock.bytesWritten += 100; watch.wrote(stream); }
    // The client has read 150 bytes: 150 wait in its receive queue (the kernel took everything we wrote).
    queues = new Map([[socketKey(lo, 50000, lo, 8080), { tx: 0, rx: 150 }]]);
    now = 1400;
    await watch.check();
    expect(stream.cutAt).toBeNull(); // oldest unread byte (from the write at 1100) is 300 ms old
    now = 1601;
    await watch.check();
    expect(stream.cutAt).toBe(501);
    expect(watch.cut).toBe(1);
    expect(watch.kernelVisible).toBe(true);
  });

  it('does not judge from a look that came late because this process was stalled', async () => {
    let now = 0;
    const watch = new SlowReaderWatch({ boundMs: 100, checkMs: 50, kernelQueues: async () => null, now: () => now });
    const { stream, sock } = fakeStream();
    sock.bytesWritten = 100; sock.writableLength = 100; watch.wrote(stream);
    await watch.check();          // t = 0: a first look
    now = 1000;                   // the next one comes 1 s late (the timer is every 50 ms)
    await watch.check();
    expect(stream.cutAt).toBeNull();
    now = 1050;                   // on time again: the client is still behind, and is cut
    await watch.check();
    expect(stream.cutAt).toBe(1050);
    watch.stop();
  });

  it('never cuts a client that keeps up, however long the stream', async () => {
    let now = 0;
    const watch = new SlowReaderWatch({ boundMs: 100, checkMs: 1_000_000, kernelQueues: async () => new Map(), now: () => now });
    const { stream, sock } = fakeStream();
    for (let i = 0; i < 50; i++) { now += 50; sock.bytesWritten += 80; watch.wrote(stream); await watch.check(); }
    expect(stream.cutAt).toBeNull();
    expect(watch.cut).toBe(0);
  });

  it('without kernel queues it still sees what waits in this process, and forgets finished streams', async () => {
    let now = 0;
    const watch = new SlowReaderWatch({ boundMs: 100, checkMs: 1_000_000, kernelQueues: async () => null, now: () => now });
    const a = fakeStream();
    const b = fakeStream();
    a.sock.bytesWritten = 100; a.sock.writableLength = 100; watch.wrote(a.stream);
    b.sock.bytesWritten = 100; b.sock.writableLength = 100; watch.wrote(b.stream);
    watch.forget(b.stream);
    now = 200;
    await watch.check();
    expect(watch.kernelVisible).toBe(false);
    expect([a.stream.cutAt, b.stream.cutAt]).toEqual([200, null]);
  });
});
