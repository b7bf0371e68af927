// The KV-type list (contract/kv-types.ts) is the addon's KvType, value for value: a type the
// engine gains and the list lacks (or the reverse) fails `npm run typecheck` here.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { KV_TYPES, type KvType } from '../../contract/kv-types.js';

describe('the KV-type list', () => {
  it("holds exactly the addon's KvType", () => {
    expectTypeOf<(typeof KV_TYPES)[number]>().toEqualTypeOf<KvType>();
    expect(new Set(KV_TYPES).size).toBe(KV_TYPES.length);
  });
});
