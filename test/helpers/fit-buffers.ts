// A fit report beside the buffers llama.cpp allocated for the same plan (ModelInfo.buffers, from its
// "<buffer> <kind> buffer size = X MiB" lines, rounded to 0.01 MiB): what the fit measured with the
// no-alloc load per device, and what the real load took there, both in MiB. The output buffer
// (logits) is not part of llama.cpp's memory breakdown, so it is left out of both.
import type { FitDeviceUse, ModelInfo } from '../../native/lib/addon.js';

export interface Use { model: number; context: number; compute: number }

const MiB = 2 ** 20;
const round = (x: number): number => Math.round(x * 100) / 100;

export function fitUse(d: FitDeviceUse): Use {
  return { model: round(d.model / MiB), context: round(d.context / MiB), compute: round(d.compute / MiB) };
}

/** What the load's buffers put on `device`; "Host": every buffer not named after one of `offload`. */
export function bufferUse(info: ModelInfo, device: string, offload: string[]): Use {
  const on = (b: ModelInfo['buffers'][number]) => (device === 'Host' ? !offload.some((d) => b.buffer === d || b.buffer.startsWith(`${d}[`)) : b.buffer === device);
  const sum = (kind: string) => round(info.buffers.filter((b) => b.kind === kind && on(b)).reduce((n, b) => n + b.mib, 0));
  return { model: sum('model'), context: sum('kv'), compute: sum('compute') };
}

/** Each figure within 0.01 MiB (the log lines' rounding). */
export function closeTo(a: Use, b: Use): boolean {
  return Math.abs(a.model - b.model) <= 0.011 && Math.abs(a.context - b.context) <= 0.011 && Math.abs(a.compute - b.compute) <= 0.011;
}
