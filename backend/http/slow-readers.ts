// Streams whose client falls behind. A slow token stream never fills the socket buffers (on
// loopback the kernel takes megabytes), so Node's backpressure says nothing while a client that
// reads a byte a second holds its engine slot. What does say it: the bytes written that the client
// has not read yet. They sit in this process (the response's buffer), in our socket's send queue,
// and, for a client on this machine, in its socket's receive queue; Linux shows both queues of
// every TCP socket in /proc/net/tcp{,6}. A stream is "behind" by the age of its oldest unread
// byte; past the bound, the client is disconnected, which cancels its request and frees its slot.
// Where /proc cannot be read, only this process's buffer counts (the write-stall guard then is the
// backstop).
import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';

/** Send and receive queue bytes per TCP socket, keyed by socketKey(local, remote). */
export type KernelQueues = Map<string, { tx: number; rx: number }>;

/** An address as /proc/net/tcp{,6} shows it, normalised: 8 hex digits for IPv4 (v4-mapped too), 32 for IPv6. */
export function addressHex(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const v4 = mapped ? mapped[1]! : /^\d+\.\d+\.\d+\.\d+$/.test(address) ? address : null;
  if (v4) return v4.split('.').map((n) => Number(n).toString(16).padStart(2, '0')).join('').toUpperCase();
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null;
  const all = [...head, ...Array(fill).fill('0'), ...tail];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  return all.map((g) => g.padStart(4, '0')).join('').toUpperCase();
}

export function socketKey(localHex: string, localPort: number, remoteHex: string, remotePort: number): string {
  return `${localHex}:${localPort}>${remoteHex}:${remotePort}`;
}

/** /proc/net/tcp prints each 32-bit word of an address in host (little-endian) byte order. */
function procAddress(hex: string): string {
  const words = hex.match(/.{8}/g) ?? [];
  const be = words.map((w) => w.match(/../g)!.reverse().join('')).join('').toUpperCase();
  return be.length === 32 && be.startsWith('00000000000000000000FFFF') ? be.slice(24) : be;
}

/** Parses /proc/net/tcp or /proc/net/tcp6 text into `into`. */
export function parseProcNetTcp(text: string, into: KernelQueues = new Map()): KernelQueues {
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 5) continue;
    const [local, remote, , queues] = [f[1]!, f[2]!, f[3], f[4]!];
    const [lAddr, lPort] = local.split(':');
    const [rAddr, rPort] = remote.split(':');
    const [tx, rx] = queues.split(':');
    if (!lAddr || !lPort || !rAddr || !rPort || !tx || !rx) continue;
    into.set(socketKey(procAddress(lAddr), parseInt(lPort, 16), procAddress(rAddr), parseInt(rPort, 16)), { tx: parseInt(tx, 16), rx: parseInt(rx, 16) });
  }
  return into;
}

/** Linux's TCP queues, or null where /proc/net/tcp cannot be read. */
export async function readKernelQueues(): Promise<KernelQueues | null> {
  const texts = await Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((p) => readFile(p, 'utf8').catch(() => null)));
  if (texts.every((t) => t === null)) return null;
  const out: KernelQueues = new Map();
  for (const t of texts) if (t !== null) parseProcNetTcp(t, out);
  return out;
}

/** What the watch needs of a response being streamed. */
export interface WatchedStream {
  readonly socket: Socket | null;
  /** Disconnects the client (its request is cancelled by whoever listens). */
  cutSlowReader(lagMs: number): void;
}

interface Tracked {
  stream: WatchedStream;
  /** socket.bytesWritten after each write, with its time: the oldest unread byte's write is the first past what was read. */
  marks: Array<{ total: number; at: number }>;
}

export interface SlowReaderOptions {
  /** A client this far behind (ms since its oldest unread byte was written) is cut; 0 = never. */
  boundMs: number;
  /** How often to look (default: boundMs / 4, within 50..1000 ms). */
  checkMs?: number;
  /** Default: readKernelQueues. */
  kernelQueues?: () => Promise<KernelQueues | null>;
  now?: () => number;
}

export class SlowReaderWatch {
  readonly boundMs: number;
  /** Clients disconnected for falling behind. */
  cut = 0;
  /** Whether the last look could see kernel queues (else only this process's buffers count). */
  kernelVisible: boolean | null = null;
  private readonly tracked = new Map<WatchedStream, Tracked>();
  private readonly checkMs: number;
  private readonly kernelQueues: () => Promise<KernelQueues | null>;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private lastCheck: number | null = null;

  constructor(opts: SlowReaderOptions) {
    this.boundMs = opts.boundMs;
    this.checkMs = opts.checkMs ?? Math.min(1000, Math.max(50, Math.floor(opts.boundMs / 4)));
    this.kernelQueues = opts.kernelQueues ?? readKernelQueues;
    this.now = opts.now ?? Date.now;
  }

  /** Called after each write of a stream (its first write starts watching it). */
  wrote(stream: WatchedStream): void {
    if (this.boundMs <= 0 || !stream.socket) return;
    let t = this.tracked.get(stream);
    if (!t) {
      t = { stream, marks: [] };
      this.tracked.set(stream, t);
      this.timer ??= setInterval(() => { void this.check(); }, this.checkMs);
      this.timer.unref();
    }
    t.marks.push({ total: stream.socket.bytesWritten, at: this.now() });
  }

  /** The stream's answer is complete (or its client gone): its request no longer holds a slot. */
  forget(stream: WatchedStream): void {
    this.tracked.delete(stream);
    if (this.tracked.size === 0) this.stop();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.lastCheck = null;
  }

  /** Looks at every watched stream once; cuts those past the bound. */
  async check(): Promise<void> {
    if (this.checking || this.tracked.size === 0) return;
    this.checking = true;
    try {
      // A look that comes far too late means this process was stalled: every client looks behind
      // by the stall, and one in this process has not had the chance to read. Judge next time.
      const started = this.now();
      const late = this.lastCheck !== null && started - this.lastCheck > 2 * this.checkMs + 250;
      this.lastCheck = started;
      const queues = await this.kernelQueues();
      this.kernelVisible = queues !== null;
      const now = this.now();
      for (const t of [...this.tracked.values()]) {
        const lag = this.lagOf(t, queues, now);
        if (lag === null) { this.forget(t.stream); continue; }
        if (lag > this.boundMs && !late) {
          this.forget(t.stream);
          this.cut++;
          t.stream.cutSlowReader(lag);
        }
      }
    } finally {
      this.checking = false;
    }
  }

  /** ms since the oldest byte the client has not read was written (0: it read everything); null: socket gone. */
  private lagOf(t: Tracked, queues: KernelQueues | null, now: number): number | null {
    const s = t.stream.socket;
    if (!s || s.destroyed) return null;
    let unread = s.writableLength;
    const local = s.localAddress ? addressHex(s.localAddress) : null;
    const remote = s.remoteAddress ? addressHex(s.remoteAddress) : null;
    if (queues && local && remote && s.localPort !== undefined && s.remotePort !== undefined) {
      unread += queues.get(socketKey(local, s.localPort, remote, s.remotePort))?.tx ?? 0;
      // A client on this machine: what its own socket holds unread.
      unread += queues.get(socketKey(remote, s.remotePort, local, s.localPort))?.rx ?? 0;
    }
    const read = s.bytesWritten - unread;
    while (t.marks.length > 0 && t.marks[0]!.total <= read) t.marks.shift();
    return t.marks.length > 0 ? now - t.marks[0]!.at : 0;
  }
}
