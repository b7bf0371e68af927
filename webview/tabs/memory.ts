// Memory of a device as the Devices and KV cache tabs show it: used of total with a meter, or,
// where the backend does not report what is free (ggml's CPU backend), the total and that fact.
import type { DeviceMemory } from '../../contract/devices.js';
import { fmtBytes, h, meter } from '../dom.js';

export function memoryCell(d: DeviceMemory): HTMLElement | string {
  if (d.memoryTotal === null) return '–';
  if (d.memoryFree === null) return h('span', { class: 'muted', title: 'The CPU backend reports the machine\'s RAM, not what this model uses' }, `${fmtBytes(d.memoryTotal)} RAM (use not reported)`);
  const used = d.memoryTotal - d.memoryFree;
  return h('span', { class: 'cell-meter' }, meter(used, d.memoryTotal, `${fmtBytes(used)} of ${fmtBytes(d.memoryTotal)} used`), ` ${fmtBytes(used)} / ${fmtBytes(d.memoryTotal)}`);
}
