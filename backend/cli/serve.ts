// `strata serve`: the OpenAI-compatible local server. Settings from flags, STRATA_* env and
// a JSON config file. It binds its port at once and says "loading … on http://HOST:PORT"
// (GET /health answers 503 "loading" meanwhile), then "listening on http://HOST:PORT" only when
// a model is loaded and requests are served; a model that does not load is reported once and
// the process exits 1 without ever saying "listening". Ctrl+C / SIGTERM stop it cleanly
// (in-flight requests end with a shutdown error, engines closed, exit 0).
import { existsSync, readFileSync } from 'node:fs';
import { createLogger } from '../log/logger.js';
import { StrataServer } from '../app/app.js';
import { ConfigError, resolveConfig, serveHelp } from '../app/config.js';
import { ensureModel } from '../models/stand-in.js';
import { defaultModelsDir } from '../../common/hub/cache-dir.js';
import { isHubModel, parseHubRef } from '../../common/hub/hub-ref.js';
import { pullModel } from '../../common/hub/pull.js';
import { pullProgress } from '../../common/hub/pull-progress.js';
import type { Logger } from '../log/logger.js';
import type { ServerConfig } from '../app/config.js';
import type { ParsedArgs } from '../args/args.js';
import { processExists } from '../../common/os/process.js';

export const command = {
  summary: 'run the OpenAI-compatible inference server',
  async run(args: ParsedArgs): Promise<number> {
    if (args.options.has('help')) { process.stdout.write(`${serveHelp()}\n`); return 0; }
    let config;
    try {
      config = resolveConfig({ flags: args.options, ...(args.repeated ? { repeated: args.repeated } : {}), env: process.env, readFile: (p) => readFileSync(p, 'utf8'),
        note: (line) => process.stderr.write(`strata serve: ${line}\n`) });
    } catch (e) {
      if (e instanceof ConfigError) { process.stderr.write(`strata serve: ${e.message}\n`); return 2; }
      throw e;
    }
    if (args.positional.length > 0) { process.stderr.write(`strata serve: unexpected argument '${args.positional[0]}' (see --help)\n`); return 2; }
    const log = createLogger({ format: config.logFormat, level: config.logLevel });

    let modelPath = config.model;
    const demo = modelPath === null;
    if (modelPath === null) {
      try {
        // A tiny generated model: StarCoder's real tokenizer (it has FIM tokens, so inline
        // completions work too) and random weights. Its vocab ships beside the addon.
        modelPath = await ensureModel({ vocab: 'starcoder', shape: 'tiny', quant: 'q8_0', seed: 1 });
      } catch (e) {
        process.stderr.write(`strata serve: no --model given and the demo model cannot be made: ${(e as Error).message}; pass --model FILE.gguf\n`);
        return 1;
      }
      log.warn(`no --model given: serving a random-weight DEMO model (${modelPath}); its answers are meaningless text. Pass --model FILE.gguf to serve a real model.`);
    } else {
      try {
        modelPath = await pullHubModels(config, log);
      } catch (e) {
        process.stderr.write(`strata serve: ${(e as Error).message}\n`);
        await log.flush();
        return 1;
      }
      const missing = config.models.find((m) => !existsSync(m.path));
      if (missing) {
        process.stderr.write(`strata serve: model file not found: ${missing.path}${config.models.length > 1 ? ` (model '${missing.name}')` : ''}\n`);
        return 1;
      }
    }

    const server = new StrataServer({ config, modelPath, demo, log });
    let stopping: Promise<number> | null = null;
    const stop = (signal: string): Promise<number> => {
      stopping ??= (async () => {
        log.info(`${signal}: shutting down`);
        await server.close();
        log.info('stopped');
        await log.flush(2000);
        return 0;
      })();
      return stopping;
    };
    const exited = new Promise<number>((resolve) => {
      process.once('SIGINT', () => { void stop('SIGINT').then(resolve); });
      process.once('SIGTERM', () => { void stop('SIGTERM').then(resolve); });
      const parent = config.parentPid;
      if (parent !== null) {
        // No signal reaches us when the parent is killed hard; poll for it instead.
        const timer = setInterval(() => {
          if (processExists(parent)) return;
          clearInterval(timer);
          void stop(`parent process ${parent} exited`).then(resolve);
        }, 1000);
        timer.unref();
      }
    });

    let listening;
    try {
      listening = await server.listen();
    } catch (e) {
      log.error((e as Error).message);
      await server.close();
      await log.flush();
      return 1;
    }
    if (config.models.length > 1) log.info(`serving ${config.models.length} models: ${config.models.map((m) => `${m.name}${m.role ? ` (${m.role})` : ''}`).join(', ')}`);
    log.info(`loading ${modelPath} on ${listening.url} (GET /health answers 503 "loading" until the model is ready)`);
    if (config.apiKey === null) log.info('no API key: only loopback clients are served (Host and Origin are checked)');
    if (config.firstToolCall === 'required') log.warn('--first-tool-call required: every conversation\'s first answer with tools is a tool call (for tests with random-weight models, not for use)');
    server.startEngines().then(
      () => { if (stopping === null) log.info(`listening on ${listening.url}`); },
      async (e: unknown) => {
        if (stopping !== null) return; // stopped during the load: not a load failure
        log.error((e as Error).message);
        await server.close();
        await log.flush();
        process.exit(1);
      },
    );
    const code = await exited;
    // Everything is closed; if some handle still holds the loop, do not hang the terminal.
    setTimeout(() => process.exit(code), 3000).unref();
    return code;
  },
};

/**
 * hf:ORG/REPO:QUANT models become their local files, pulled into the models folder when missing
 * (none asked for when they are there), before anything loads. Ctrl+C stops a pull; what arrived
 * is kept for the next start to resume. Returns the default model's path.
 */
async function pullHubModels(config: ServerConfig, log: Logger): Promise<string> {
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    for (const spec of config.models) {
      if (!isHubModel(spec.path)) continue;
      const r = await pullModel({
        ref: parseHubRef(spec.path), dir: defaultModelsDir(), signal: ac.signal,
        onEvent: pullProgress({ line: (text) => log.info(`model ${spec.name}: ${text}`) }),
      });
      log.info(`model ${spec.name}: ${spec.path} is ${r.path}${r.alreadyPresent ? ' (already pulled)' : ''}`);
      spec.path = r.path;
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  config.model = config.models[0]!.path;
  return config.model;
}
