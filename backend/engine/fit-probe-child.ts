// The fit probe (bundled to dist/fit-probe.mjs, run by fit-probe.ts): what a model needs on each
// device as asked, measured by llama.cpp's no-alloc load without reading its weights, in a process
// of its own (a llama.cpp abort on a bad file costs this process, never the server's).
//
//   fit-probe.mjs '<EngineOptions JSON>'   prints {"kind":"fit","report":FitReport}
import type { EngineOptions } from '../../native/lib/addon.js';
import { loadAddon } from '../addon/loader.js';

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as Omit<EngineOptions, 'onEvents'>;
  const report = await loadAddon().fitModel(options, { asked: true });
  process.stdout.write(`${JSON.stringify({ kind: 'fit', report })}\n`);
}

main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`fit probe: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
