// The KV cache types the engine offers (addon.d.ts's KvType) as a list of values: the one list the
// server's --kv-type, the memory estimate and the extension's strata.kvType setting (checked by
// test/unit/settings-table.test.ts) use. That it holds every KvType: test/unit/kv-types.test.ts.
import type { KvType } from '../native/lib/addon.js';

export type { KvType } from '../native/lib/addon.js';
export const KV_TYPES = ['f16', 'q8_0', 'q4_0'] as const satisfies readonly KvType[];
