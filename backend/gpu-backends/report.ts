// The whole answer of `strata gpu list`: the pin, what is installed, what this machine can
// run, which devices ggml sees with the installed backends loaded (and which libraries did not
// load, with the loader's reason), and a suggestion when a GPU goes unused.
import type { DeviceInfo } from '../../native/lib/addon.js';
import type { NativeAddon } from '../addon/loader.js';
import { installedBackendDirs, listInstalled, backendStoreDir, type BackendStoreOptions, type InstalledBackend } from './install.js';
import { probeMachine, type MachineProbeOptions, type MachineReport } from './machine.js';
import { PIN } from './pin.js';
import { allReadiness, suggestBackend, type BackendReadiness, type Suggestion } from './readiness.js';

export interface BackendsReport {
  llamaCommit: string;
  nodeLlamaCpp: string;
  store: string;
  installed: InstalledBackend[];
  readiness: BackendReadiness[];
  machine: MachineReport;
  /** ggml's devices in this process, installed backends loaded. */
  devices: DeviceInfo[];
  /** Backend libraries that did not load, with the loader's reason. */
  failed: Array<{ path: string; error: string }>;
  suggestion: Suggestion | null;
}

export function backendsReport(addon: NativeAddon, opts: BackendStoreOptions & MachineProbeOptions = {}): BackendsReport {
  const pin = opts.pin ?? PIN;
  const installed = listInstalled(opts);
  const loaded = addon.loadBackends({ dirs: installedBackendDirs(opts) });
  const devices = addon.listDevices();
  const machine = probeMachine(opts);
  return {
    llamaCommit: pin.llamaCommit, nodeLlamaCpp: pin.nodeLlamaCpp, store: backendStoreDir(opts),
    installed, readiness: allReadiness(machine, pin), machine, devices, failed: loaded.failed,
    suggestion: suggestBackend(machine, installed.map((b) => b.kind), devices, pin),
  };
}
