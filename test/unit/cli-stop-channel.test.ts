// backend/cli/stop-channel.ts: a parent's close of the IPC channel is strata's SIGTERM where there
// is none to send (Windows). A real process: a child with the mapping installed, its channel
// closed by the parent. (The server stopping this way: test/integration/server-cli.test.ts.)
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';
import { STOPPED_EXIT_CODE } from '../../backend/cli/stop-channel.js';

/** A child running the mapping (the same function, bundled inline by esbuild) then `body`. */
async function child(body: string): Promise<{ exit: Promise<[number | null, string]>; disconnect: () => void }> {
  const { build } = await import('esbuild');
  const out = await build({
    stdin: { contents: `import { stopOnChannelClose } from './backend/cli/stop-channel.ts';\nstopOnChannelClose();\n${body}`, resolveDir: packageRoot, loader: 'ts' },
    bundle: true, platform: 'node', format: 'esm', write: false,
  });
  const c = spawn(process.execPath, ['--input-type=module', '-e', out.outputFiles[0]!.text], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let text = '';
  c.stdout!.on('data', (d: Buffer) => { text += String(d); });
  // 'exit' and the end of stdout: a child whose channel the parent closed never emits 'close' (Node 20).
  const ended = new Promise((resolve) => c.stdout!.once('end', resolve));
  const exit = new Promise<[number | null, string]>((resolve) => c.once('exit', (code) => { void ended.then(() => resolve([code, text])); }));
  await new Promise((r) => c.stdout!.once('data', r)); // the body says it runs
  return { exit, disconnect: () => c.disconnect() };
}

describe('stopOnChannelClose', () => {
  it('runs the SIGTERM handlers when the parent closes the channel', async () => {
    const c = await child(`process.once('SIGTERM', (s) => { console.log('handler ' + s); process.exit(0); }); console.log('up'); setInterval(() => {}, 1000);`);
    c.disconnect();
    expect(await c.exit).toEqual([0, 'up\nhandler SIGTERM\n']);
  });
  it('without handlers, ends the command at once with 143', async () => {
    const c = await child(`console.log('up'); setInterval(() => {}, 1000);`);
    c.disconnect();
    expect(await c.exit).toEqual([STOPPED_EXIT_CODE, 'up\n']);
  });
  it('never keeps a finished command alive', async () => {
    const c = await child(`console.log('done');`);
    expect(await c.exit).toEqual([0, 'done\n']);
  });
});
