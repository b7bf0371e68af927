// Proof that a server holds an API key, without the key crossing the wire: the client sends a
// random challenge to GET /health (which needs no key), the server answers an HMAC of it under its
// key, and the client compares. The extension checks its managed server this way before it sends
// the key: another program listening on the port cannot answer.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A challenge's form: what a client makes, what the server answers for (anything else gets no proof). */
const CHALLENGE = /^[A-Za-z0-9_-]{16,128}$/;

export function newChallenge(): string {
  return randomBytes(24).toString('base64url');
}

/** The proof for `challenge` under `apiKey`, or null for a challenge not of the expected form. */
export function keyProof(apiKey: string, challenge: string): string | null {
  if (!CHALLENGE.test(challenge)) return null;
  // A label of its own, so the proof is an HMAC no other use of the key produces.
  return createHmac('sha256', apiKey).update(`strata /health key proof\n${challenge}`).digest('base64url');
}

export function proofMatches(apiKey: string, challenge: string, proof: string | null | undefined): boolean {
  const want = keyProof(apiKey, challenge);
  if (want === null || typeof proof !== 'string') return false;
  const a = Buffer.from(want);
  const b = Buffer.from(proof);
  return a.length === b.length && timingSafeEqual(a, b);
}
