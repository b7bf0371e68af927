// Content hashes for the index: a file's hash says whether to chunk it again, a chunk's says
// whether its vector can be kept (same text, same vector: an edit re-embeds only the chunks it
// changed, a rename none). SHA-256, cut to 128 bits: collisions are out of reach at any size.
import { createHash } from 'node:crypto';

export function contentHash(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
