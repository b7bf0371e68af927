// Whether a model file fits this machine, before it is downloaded: its bytes plus room for its
// KV cache and compute buffers against a GPU's free memory (when the running server reports its
// devices) and the free RAM. The room is a rule of thumb, not the server's fit probe (which needs
// the file): a tenth of the model and at least 512 MiB. On the CPU, the expected decode speed
// scaled from what the running server measured (speedNote). No vscode here.
import type { DeviceMemory } from '../../contract/devices.js';
import { formatSize, modelChoices } from '../../common/hub/pick.js';
import type { HubFile } from '../../common/hub/repo-files.js';

export interface MachineMemory {
  ramFree: number;
  /** Free bytes per GPU; empty when none is known (no server running, or none there). */
  gpus: Array<{ name: string; free: number }>;
}

export type FitVerdict =
  | { fits: true; where: string; text: string }
  | { fits: false; text: string };

const MIB = 1 << 20;
const GIB = 1 << 30;
const gib = (n: number): string => `${(n / GIB).toFixed(1)} GiB`;

/** What the model needs in memory to serve: the file and room for KV and compute. */
export function neededBytes(fileBytes: number): number {
  return fileBytes + Math.max(512 * MIB, Math.round(fileBytes * 0.1));
}

/** GPUs from the server's /v1/devices (one row per device; replicas' rows of one device merged). */
export function machineMemory(ramFree: number, devices: readonly DeviceMemory[]): MachineMemory {
  const gpus = new Map<string, number>();
  for (const d of devices) {
    if ((d.type === 'gpu' || d.type === 'igpu') && d.memoryFree !== null) gpus.set(d.name, Math.max(gpus.get(d.name) ?? 0, d.memoryFree));
  }
  return { ramFree, gpus: [...gpus].map(([name, free]) => ({ name, free })) };
}

export function fitOf(fileBytes: number, mem: MachineMemory): FitVerdict {
  const need = neededBytes(fileBytes);
  const gpu = [...mem.gpus].sort((a, b) => b.free - a.free)[0];
  if (gpu && gpu.free >= need) return { fits: true, where: gpu.name, text: `fits ${gpu.name} (${gib(gpu.free)} free)` };
  if (mem.ramFree >= need) return { fits: true, where: 'CPU', text: `fits in RAM on the CPU (${gib(mem.ramFree)} free)${gpu ? `; not in ${gpu.name} (${gib(gpu.free)} free)` : ''}` };
  const most = Math.max(mem.ramFree, gpu?.free ?? 0);
  return { fits: false, text: `too big: needs about ${gib(need)}, ${gib(most)} free${gpu ? ` (${gpu.name})` : ' in RAM'}` };
}

/**
 * Each choice with its verdict; one that does not fit also names the largest choice that does
 * ("Q4_K_M would fit"), or says none does.
 */
export function fitChoices<T extends { name: string; bytes: number }>(choices: readonly T[], mem: MachineMemory): Array<T & { fit: FitVerdict; instead: string | null }> {
  const verdicts = choices.map((c) => ({ ...c, fit: fitOf(c.bytes, mem) }));
  const best = verdicts.filter((v) => v.fit.fits).sort((a, b) => b.bytes - a.bytes)[0];
  return verdicts.map((v) => ({ ...v, instead: v.fit.fits ? null : best ? `${best.name} would fit` : 'no file of this model fits' }));
}

/**
 * A decode speed the server measured, and the model it measured it with: on a CPU decoding reads
 * every weight once per token, so tokens per second scale with the inverse of the file's size.
 */
export interface SpeedBasis {
  /** Decode tokens per second (the server's /metrics totals.decode_tok_s for its default model). */
  tokS: number;
  /** That model's size in bytes (its /v1/models meta.size). */
  bytes: number;
  model: string;
}

/** About how fast a file of `fileBytes` decodes on the CPU that measured `basis`; null without a usable basis. */
export function expectedTokS(fileBytes: number, basis: SpeedBasis | null): number | null {
  if (!basis || !(basis.tokS > 0) || !(basis.bytes > 0) || !(fileBytes > 0)) return null;
  return (basis.tokS * basis.bytes) / fileBytes;
}

const speedText = (tokS: number): string => (tokS >= 10 ? Math.round(tokS).toString() : tokS.toFixed(1));

/** The speed part of a CPU row: the estimate and where its number comes from. */
export function speedNote(fileBytes: number, basis: SpeedBasis | null): string {
  const t = expectedTokS(fileBytes, basis);
  if (t === null || !basis) return 'speed unknown until the server has generated text';
  return `about ${speedText(t)} tok/s (scaled by size from ${speedText(basis.tokS)} tok/s the server measured with ${basis.model}, ${formatSize(basis.bytes)})`;
}

export interface FileRow {
  /** The file to pull (a split model's first part). */
  path: string;
  bytes: number;
  parts: number;
  fits: boolean;
  /** Size (and parts). */
  description: string;
  /** The fit, and what would fit instead when it does not. */
  detail: string;
}

/**
 * A repository's models as Choose Models lists them: the catalogue's quantisation first, then
 * those that fit, smallest first, then the rest.
 */
export function fileRows(files: readonly HubFile[], preferredQuant: string | null, mem: MachineMemory, speed: SpeedBasis | null = null): FileRow[] {
  const rows = fitChoices(modelChoices(files).map((c) => ({ name: c.path, bytes: c.size, parts: c.parts.length })), mem);
  const preferred = (name: string): boolean => preferredQuant !== null && name.toLowerCase().includes(preferredQuant.toLowerCase());
  return rows
    .sort((a, b) => Number(preferred(b.name)) - Number(preferred(a.name)) || Number(b.fit.fits) - Number(a.fit.fits) || a.bytes - b.bytes)
    .map((r) => ({
      path: r.name, bytes: r.bytes, parts: r.parts, fits: r.fit.fits,
      description: `${formatSize(r.bytes)}${r.parts > 1 ? `, ${r.parts} parts` : ''}`,
      // On the CPU the expected speed too (a GPU's speed does not follow from a CPU's figure).
      detail: r.fit.fits ? (r.fit.where === 'CPU' ? `${r.fit.text}; ${speedNote(r.bytes, speed)}` : r.fit.text) : `${r.fit.text}; ${r.instead}`,
    }));
}
