// `strata devices`: the ggml devices this build sees (CPU, GPUs, RPC servers) with memory, with
// the GPU backends installed by `strata gpu install` loaded as the server's engines load them.
import type { DeviceInfo } from '../../native/lib/addon.js';
import { loadAddon } from '../addon/loader.js';
import { optList, UsageError, type ParsedArgs } from '../args/args.js';
import { optFlag, rejectUnknownOptions, runCommand } from '../args/command-usage.js';
import { installedBackendDirs } from '../gpu-backends/install.js';
import { describeLoadFailure } from '../gpu-backends/readiness.js';

const USAGE = `usage: strata devices [--rpc HOST:PORT,...] [--json]
  --rpc    ggml RPC servers to add as devices (RPC0, RPC1, ... in this order)
  --json   print the device list as JSON`;

export interface DevicesArgs { rpc: string[]; json: boolean }

export function parseDevicesArgs(args: ParsedArgs): DevicesArgs {
  rejectUnknownOptions(args, ['rpc', 'json', 'help']);
  const rpc = optList(args, 'rpc') ?? [];
  if (args.options.get('rpc') === 'true' || (args.options.has('rpc') && rpc.length === 0)) {
    throw new UsageError('--rpc needs HOST:PORT[,HOST:PORT...]');
  }
  for (const ep of rpc) {
    const m = /^([^:\s]+):(\d{1,5})$/.exec(ep);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new UsageError(`--rpc endpoint '${ep}' is not HOST:PORT`);
  }
  return { rpc, json: optFlag(args, 'json') };
}

function mib(n: number): string {
  return `${Math.round(n / (1 << 20))} MiB`;
}

export function formatDevices(devices: DeviceInfo[]): string {
  const rows = [['name', 'type', 'backend', 'free', 'total', 'description'],
    ...devices.map((d) => [d.name, d.type, d.backend, mib(d.memoryFree), mib(d.memoryTotal), d.description])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

export const command = {
  summary: 'list compute devices (CPU, GPUs, RPC servers) with memory',
  run: (args: ParsedArgs): Promise<number> => runCommand('devices', USAGE, args, async () => {
    const o = parseDevicesArgs(args);
    const addon = loadAddon();
    const loaded = addon.loadBackends({ dirs: installedBackendDirs() });
    const devices = addon.listDevices(o.rpc);
    if (o.json) {
      process.stdout.write(`${JSON.stringify(devices, null, 2)}\n`);
    } else {
      const failed = loaded.failed.map((f) => `\ndid not load: ${describeLoadFailure(f)}`).join('');
      process.stdout.write(`${formatDevices(devices)}\n${failed}\nsystem: ${addon.systemInfo().trim()}\n`);
    }
    return 0;
  }),
};
