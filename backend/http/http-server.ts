// The HTTP server: the route table, access checks, and the one place errors become
// answers. Handlers throw ApiError for what the client can fix (4xx) or what is down (503);
// anything else is a 500 with the message, logged with the request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ApiError, apiError, toApiError } from '../validation/errors.js';
import type { AppContext } from './app-context.js';
import { ClientGone } from './generation.js';
import { sendError } from './respond.js';
import { Router, type Handler, type RouteContext } from './router.js';
import { chatCompletions } from './routes/chat.js';
import { completions } from './routes/completions.js';
import { embeddings } from './routes/embeddings.js';
import { metricsJson, metricsPrometheus, traceOne, tracesList } from './routes/diagnostics.js';
import { infill } from './routes/infill.js';
import { nextEdit } from './routes/next-edit.js';
import { countTokens, messages } from './routes/messages.js';
import { devices, health } from './routes/info.js';
import { modelLoad, modelsList, modelUnload } from './routes/models.js';
import { rerank } from './routes/rerank.js';
import { createResponse, deleteResponse, getResponse, inputTokens, listInputItems } from './routes/responses.js';
import { routedTo } from './model-routing.js';
import { sessionDelete, sessionGet, sessionRestore, sessionSave, sessionsList } from './routes/sessions.js';
import { detokenize, tokenize } from './routes/tokens.js';
import { checkAccess } from './security.js';

export function buildRouter(app: AppContext): Router {
  // Routes that name no model run in the default model's context (while it is loaded; else a loaded one's).
  const h = (fn: (app: AppContext, ctx: RouteContext) => Promise<void> | void): Handler => (ctx) => fn(app.models.front(), ctx);
  // Routes that run in the context of the model they name (or of their role's model, or the default).
  const chat = (fn: (app: AppContext, ctx: RouteContext) => Promise<void> | void) => h(routedTo('chat', fn));
  const completion = (fn: (app: AppContext, ctx: RouteContext) => Promise<void> | void) => h(routedTo('completion', fn));
  const embedding = (fn: (app: AppContext, ctx: RouteContext) => Promise<void> | void) => h(routedTo('embedding', fn));
  const reranking = (fn: (app: AppContext, ctx: RouteContext) => Promise<void> | void) => h(routedTo('rerank', fn));
  const named = (fn: (app: AppContext, ctx: RouteContext) => Promise<void> | void) => h(routedTo(null, fn));
  return new Router()
    .add({ method: 'GET', pattern: '/health', handler: h(health), public: true })
    .add({ method: 'GET', pattern: '/v1/health', handler: h(health), public: true })
    .add({ method: 'GET', pattern: '/v1/models', handler: h(modelsList) })
    .add({ method: 'POST', pattern: '/v1/models/load', handler: h(modelLoad) })
    .add({ method: 'POST', pattern: '/v1/models/unload', handler: h(modelUnload) })
    .add({ method: 'POST', pattern: '/v1/chat/completions', handler: chat(chatCompletions) })
    .add({ method: 'POST', pattern: '/v1/completions', handler: completion(completions) })
    .add({ method: 'POST', pattern: '/v1/embeddings', handler: embedding(embeddings) })
    .add({ method: 'POST', pattern: '/v1/messages', handler: chat(messages) })
    .add({ method: 'POST', pattern: '/v1/messages/count_tokens', handler: chat(countTokens) })
    .add({ method: 'POST', pattern: '/v1/responses', handler: chat(createResponse) })
    .add({ method: 'POST', pattern: '/v1/responses/input_tokens', handler: chat(inputTokens) })
    .add({ method: 'GET', pattern: '/v1/responses/:id', handler: h(getResponse) })
    .add({ method: 'DELETE', pattern: '/v1/responses/:id', handler: h(deleteResponse) })
    .add({ method: 'GET', pattern: '/v1/responses/:id/input_items', handler: h(listInputItems) })
    .add({ method: 'POST', pattern: '/embeddings', handler: embedding(embeddings) })
    .add({ method: 'POST', pattern: '/v1/rerank', handler: reranking(rerank) })
    .add({ method: 'POST', pattern: '/rerank', handler: reranking(rerank) })
    .add({ method: 'POST', pattern: '/v1/reranking', handler: reranking(rerank) })
    .add({ method: 'POST', pattern: '/reranking', handler: reranking(rerank) })
    .add({ method: 'POST', pattern: '/v1/infill', handler: completion(infill) })
    .add({ method: 'POST', pattern: '/infill', handler: completion(infill) })
    .add({ method: 'POST', pattern: '/v1/edits/next', handler: completion(nextEdit) })
    .add({ method: 'POST', pattern: '/v1/tokenize', handler: named(tokenize) })
    .add({ method: 'POST', pattern: '/tokenize', handler: named(tokenize) })
    .add({ method: 'POST', pattern: '/v1/detokenize', handler: named(detokenize) })
    .add({ method: 'POST', pattern: '/detokenize', handler: named(detokenize) })
    .add({ method: 'GET', pattern: '/v1/devices', handler: h(devices) })
    .add({ method: 'GET', pattern: '/v1/traces', handler: named(tracesList) })
    .add({ method: 'GET', pattern: '/v1/traces/:id', handler: named(traceOne) })
    .add({ method: 'GET', pattern: '/v1/sessions', handler: h(sessionsList) })
    .add({ method: 'POST', pattern: '/v1/sessions', handler: named(sessionSave) })
    .add({ method: 'GET', pattern: '/v1/sessions/:name', handler: h(sessionGet) })
    .add({ method: 'DELETE', pattern: '/v1/sessions/:name', handler: h(sessionDelete) })
    .add({ method: 'POST', pattern: '/v1/sessions/:name/restore', handler: h(routedTo(null, sessionRestore, savedWith)) })
    .add({ method: 'GET', pattern: '/metrics', handler: h(metricsJson) })
    .add({ method: 'GET', pattern: '/metrics/prometheus', handler: h(metricsPrometheus) });
}

/** The model a saved session was made with (restores naming no model go to it). */
async function savedWith(app: AppContext, ctx: RouteContext): Promise<string | null> {
  const meta = await app.sessions.get(ctx.params.name ?? '').catch(() => null);
  return meta?.model.name ?? null;
}

/** What the server holds for its clients (--headers-timeout-ms, --body-timeout-ms, --max-connections). */
export interface ConnectionLimits {
  /** A request's headers must arrive within this, ms (0: no limit). */
  headersTimeoutMs: number;
  /** Its body within this after them, ms (0: no limit). */
  bodyTimeoutMs: number;
  /** Connections open at once; one more is closed as soon as it is accepted. */
  maxConnections: number;
}

/** How often Node looks for requests past their deadline: a fraction of the shortest, at most a second. */
function checkEveryMs(...deadlines: number[]): number | undefined {
  const shortest = Math.min(...deadlines.filter((ms) => ms > 0));
  return Number.isFinite(shortest) ? Math.max(10, Math.min(1000, Math.floor(shortest / 4))) : undefined;
}

export function createHttpServer(app: AppContext, limits: ConnectionLimits, router = buildRouter(app)): Server {
  // Node's requestTimeout bounds receiving a request (headers and body), never answering it:
  // a stream may run for many minutes once its request is in. The body reader's own 408 comes
  // first; this catches bodies no route reads.
  const headersTimeout = limits.headersTimeoutMs;
  const requestTimeout = headersTimeout > 0 && limits.bodyTimeoutMs > 0 ? headersTimeout + limits.bodyTimeoutMs : 0;
  const every = checkEveryMs(headersTimeout, requestTimeout);
  const server = createServer({
    keepAliveTimeout: 5000, headersTimeout, requestTimeout, ...(every !== undefined ? { connectionsCheckingInterval: every } : {}),
  }, (req, res) => {
    void handle(app, router, req, res);
  });
  server.maxConnections = limits.maxConnections;
  let warned = 0;
  server.on('drop', () => {
    if (Date.now() - warned < 60_000) return;
    warned = Date.now();
    app.log.warn(`${limits.maxConnections} connections are open (--max-connections): new ones are closed until some end`);
  });
  return server;
}

const corsHeaders = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Api-Key, Anthropic-Version, Anthropic-Beta',
  'Access-Control-Max-Age': '600',
};

async function handle(app: AppContext, router: Router, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = Date.now();
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://localhost');
  } catch {
    refuse(res, apiError('invalid_url', 'malformed request URL'));
    return;
  }
  const method = req.method ?? 'GET';
  // With a key, browsers may call us cross-site (the key protects); without one they may not.
  const cors = app.config.apiKey !== null && typeof req.headers.origin === 'string';
  if (cors) for (const [k, v] of Object.entries(corsHeaders)) res.setHeader(k, v);

  if (method === 'OPTIONS') {
    const verdict = checkAccess(req.headers, app.config.apiKey, true);
    if (!verdict.ok) { refuse(res, apiError(verdict.code, verdict.message)); return; }
    res.writeHead(204);
    res.end();
    return;
  }

  const found = router.match(method, url.pathname);
  const isPublic = 'route' in found && found.route.public === true;
  const verdict = checkAccess(req.headers, app.config.apiKey, isPublic);
  if (!verdict.ok) {
    refuse(res, apiError(verdict.code, verdict.message));
    return;
  }
  if ('error' in found) {
    if (found.error === 'method') {
      refuse(res, apiError('method_not_allowed', `${method} is not allowed on ${url.pathname} (allowed: ${found.allowed.join(', ')})`), { Allow: found.allowed.join(', ') });
    } else {
      refuse(res, apiError('not_found', `no route ${method} ${url.pathname}`));
    }
    return;
  }

  try {
    await found.route.handler({ req, res, params: found.params, url });
  } catch (e) {
    if (e instanceof ClientGone) { res.destroy(); return; }
    const err = toApiError(e);
    if (err.status >= 500 && !(e instanceof ApiError)) app.log.error('request failed', { method, path: url.pathname, error: (e as Error)?.stack ?? String(e) });
    if (res.headersSent) { res.end(); return; }
    // A body not read to its end (too large, too slow, over the read budget, or never read) is not drained.
    if (!req.complete || err.status === 413 || err.status === 408) refuse(res, err);
    else sendError(res, err);
  } finally {
    const path = url.pathname;
    if (path !== '/health' && path !== '/metrics') {
      app.log.debug('http', { method, path, status: res.statusCode, ms: Date.now() - started });
    }
  }
}

/**
 * Answers a request whose body the server will not read, and closes the connection once the
 * answer is out (Node closes it on `Connection: close`): draining the body instead would let a
 * client hold the connection as long as it keeps sending, a byte at a time.
 */
function refuse(res: ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  sendError(res, err, { ...headers, Connection: 'close' });
}
