// Image files for tests, written from pixels: PNG (zlib from Node, no image library), GIF and
// JPEG written code by code, and decompression bombs of each (small headers, data for far more).
import { constants, createDeflate, deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG of 8-bit RGB pixels: its header and its compressed image data. */
function png(width: number, height: number, idat: Uint8Array, interlace = false): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, interlace ? 1 : 0], 8);  // 8 bits, RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', new Uint8Array()),
  ]);
}

/** Adam7's passes: first column and row, column and row steps. */
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]] as const;

/**
 * An 8-bit RGB PNG whose pixel (x, y) is pixel(x, y) = [r, g, b], interlaced (Adam7) on request;
 * `trailing` zero bytes after the image data, as some encoders leave.
 */
export function pngImage(
  width: number, height: number, pixel: (x: number, y: number) => [number, number, number],
  opts: { interlace?: boolean; trailing?: number } = {},
): Buffer {
  const rows: number[] = [];
  const passes = opts.interlace ? ADAM7 : [[0, 0, 1, 1] as const];
  for (const [x0, y0, dx, dy] of passes) {
    if (x0 >= width) continue;
    for (let y = y0; y < height; y += dy) {
      rows.push(0);  // filter: none
      for (let x = x0; x < width; x += dx) rows.push(...pixel(x, y));
    }
  }
  const raw = Buffer.concat([Buffer.from(rows), Buffer.alloc(opts.trailing ?? 0)]);
  return png(width, height, deflateSync(raw), opts.interlace);
}

/**
 * A PNG declaring width x height whose image data inflates to `inflated` zero bytes: a
 * decompression bomb (zeros deflate about 1000:1). Deflated as a stream, never held whole.
 */
export async function pngBomb(width: number, height: number, inflated: number): Promise<Buffer> {
  const z = createDeflate({ level: constants.Z_BEST_COMPRESSION });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((resolve, reject) => { z.on('end', resolve); z.on('error', reject); });
  const zeros = Buffer.alloc(1 << 20);
  for (let left = inflated; left > 0; left -= zeros.length) {
    if (!z.write(left >= zeros.length ? zeros : zeros.subarray(0, left))) await new Promise((r) => z.once('drain', r));
  }
  z.end();
  await ended;
  return png(width, height, Buffer.concat(out));
}

/** A PNG whose header declares width x height but holds one row of data: what a decompression bomb's header looks like. */
export function pngHeaderOnly(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(width * 3 + 1))), chunk('IEND', new Uint8Array()),
  ]);
}

/** A data URL of a PNG (what OpenAI's image_url carries). */
export function pngDataUrl(png: Uint8Array): string {
  return `data:image/png;base64,${Buffer.from(png).toString('base64')}`;
}

/** A small test picture: a gradient whose colours depend on `seed`. */
export function testPicture(seed: number, size = 48): Buffer {
  return pngImage(size, size, (x, y) => [(x * 5 + seed * 37) & 255, (y * 5 + seed * 11) & 255, ((x + y) * 3 + seed * 71) & 255]);
}

/** LZW codes packed least significant bit first, at the code widths a GIF decoder reads them with. */
class LzwWriter {
  readonly bytes: number[] = [];
  private bits = 0;
  private n = 0;
  constructor(readonly minCodeSize: number) {}
  write(code: number, width: number): void {
    this.bits |= code << this.n;
    for (this.n += width; this.n >= 8; this.n -= 8) {
      this.bytes.push(this.bits & 255);
      this.bits >>>= 8;
    }
  }
  /** The LZW data as a GIF holds it: the code size, then sub-blocks of up to 255 bytes. */
  blocks(): Buffer {
    if (this.n > 0) this.bytes.push(this.bits & 255);
    const out = [this.minCodeSize];
    for (let i = 0; i < this.bytes.length; i += 255) {
      const b = this.bytes.slice(i, i + 255);
      out.push(b.length, ...b);
    }
    return Buffer.from([...out, 0]);
  }
}

/** A GIF of width x height whose one frame is the given LZW data, with a 2-colour palette (black, white). */
function gif(width: number, height: number, lzw: Buffer): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  screen[4] = 0x80;  // a global colour table of 2 entries
  const frame = Buffer.alloc(10);
  frame[0] = 0x2c;
  frame.writeUInt16LE(width, 5);
  frame.writeUInt16LE(height, 7);
  return Buffer.concat([Buffer.from('GIF89a'), screen, Buffer.from([0, 0, 0, 255, 255, 255]), frame, lzw, Buffer.from([0x3b])]);
}

/**
 * A GIF declaring width x height whose LZW codes decode to far more pixels than that: each code
 * names the longest string so far (about 4,000 pixels a code), `cycles` times over a full code table.
 */
export function gifBomb(width: number, height: number, cycles: number): Buffer {
  const w = new LzwWriter(2);  // colours 0-3; clear 4, end 5, first free code 6
  let size = 3;
  for (let c = 0; c < cycles; c++) {
    w.write(4, size);
    size = 3;
    w.write(0, size);
    // The decoder adds a code for each one it reads and widens its codes at powers of two (to 12 bits).
    for (let avail = 6; avail < 8192; avail++) {
      w.write(Math.min(avail, 4095), size);
      if (((avail + 1) & ((1 << size) - 1)) === 0 && avail + 1 <= 0xfff) size++;
    }
  }
  w.write(5, size);
  return gif(width, height, w.blocks());
}

/** A width x height GIF of alternating black and white pixels, one LZW code each. */
export function gifImage(width: number, height: number): Buffer {
  const w = new LzwWriter(2);
  w.write(4, 3);
  // One code per pixel with a clear every few codes, so the code width stays 3 bits.
  for (let i = 0; i < width * height; i++) {
    if (i > 0 && i % 2 === 0) w.write(4, 3);
    w.write(i & 1, 3);
  }
  w.write(5, 3);
  return gif(width, height, w.blocks());
}

/**
 * A progressive grayscale JPEG of width x height with `scans` AC scans, each a few bytes that
 * skip every block (end-of-band runs): the decoder reads all the image's blocks once a scan.
 */
export function jpegScans(width: number, height: number, scans: number): Buffer {
  const seg = (marker: number, body: number[]): number[] => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 255, ...body];
  const head = [
    0xff, 0xd8,
    ...seg(0xdb, [0, ...new Array(64).fill(1)]),  // quantization table 0
    ...seg(0xc2, [8, height >> 8, height & 255, width >> 8, width & 255, 1, 1, 0x11, 0]),  // progressive, one component
    // AC table 0: one code, "0", for EOB14 (a run of 2^14 + 14 more bits of blocks).
    ...seg(0xc4, [0x10, 1, ...new Array(15).fill(0), 0xe0]),
  ];
  // Enough runs of 32,767 blocks to cover the image, packed and byte-stuffed.
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits: number[] = [];
  for (let covered = 0; covered < blocks; covered += 32767) bits.push(0, ...new Array(14).fill(1));
  while (bits.length % 8) bits.push(1);
  const data: number[] = [];
  for (let i = 0; i < bits.length; i += 8) {
    const byte = bits.slice(i, i + 8).reduce((a, b) => (a << 1) | b, 0);
    data.push(byte, ...(byte === 0xff ? [0] : []));
  }
  const scan = [...seg(0xda, [1, 1, 0x00, 1, 63, 0]), ...data];
  const out = [...head];
  for (let i = 0; i < scans; i++) out.push(...scan);
  out.push(0xff, 0xd9);
  return Buffer.from(out);
}
