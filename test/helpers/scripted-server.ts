// A real StrataServer whose engines are scripted (FakeEngineClient): every request is answered
// with the pieces `answer` gives, and the model may carry a chat template. For HTTP-level tests
// of routes without a model; close() stops the server and removes its folder.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StrataServer } from '../../backend/app/app.js';
import { defaultConfig, type ServerConfig } from '../../backend/app/config.js';
import { silentLogger } from '../../backend/log/logger.js';
import type { ModelInfo } from '../../native/lib/addon.js';
import { FakeEngineClient, type FakeEngineOptions, type FakeRequest } from './fake-engine-client.js';

/** A fake engine whose model carries `template` as its chat template (null: none, ChatML is used). */
export class TemplatedFake extends FakeEngineClient {
  constructor(opts: FakeEngineOptions, private readonly template: string | null) { super(opts); }
  override async start(): Promise<ModelInfo> {
    const info = await super.start();
    info.chatTemplate = this.template;
    return info;
  }
}

export interface ScriptedServer {
  server: StrataServer;
  url: string;
  fakes: FakeEngineClient[];
  /** The server's folder: its model file, sessions/ and responses/ (kept across a restart when given back). */
  dir: string;
  close(): Promise<void>;
}

/** `dir`: serve from an existing folder (a restarted server); else a new one, removed by close(). */
export async function serveScripted(
  answer: (r: FakeRequest) => string[],
  opts: { template?: string | null; ctx?: number; config?: Partial<ServerConfig>; dir?: string } = {},
): Promise<ScriptedServer> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'strata-scripted-'));
  const modelPath = join(dir, 'fake.gguf');
  writeFileSync(modelPath, 'not really a model: the scripted engines never read it');
  const fakes: FakeEngineClient[] = [];
  const server = new StrataServer({
    config: { ...defaultConfig(), port: 0, sessionsDir: join(dir, 'sessions'), responsesDir: join(dir, 'responses'), prefixCacheDir: join(dir, 'prefix-cache'), ...opts.config },
    modelPath, log: silentLogger,
    engineFactory: (replica) => {
      const f = new TemplatedFake({ replica, slots: 2, ctx: opts.ctx ?? 1024, autoRun: { tokens: 0, text: answer } }, opts.template ?? null);
      fakes.push(f);
      return f;
    },
  });
  const { url } = await server.listen();
  await server.startEngines();
  return {
    server, url, fakes, dir,
    close: async () => {
      await server.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
