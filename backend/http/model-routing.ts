// Routes a request to its model: the body's `model` (GET routes: ?model=), else the first model
// of the route's role (an infill goes to the completion model, embeddings to the embedding
// model), else the default model. The route runs in that model's context, holding it loaded
// until it has answered. A model that is not loaded loads first; a streamed request waiting
// for it gets `: keep-alive` comments (its 200 goes out with the first one, so a load that
// fails after that ends the stream with an error event).
import type { ModelRole } from '../../contract/models.js';
import { toApiError } from '../validation/errors.js';
import type { AppContext } from './app-context.js';
import { ClientConnection } from './client-connection.js';
import { readJson } from './respond.js';
import type { RouteContext } from './router.js';
import { SseStream } from './sse.js';

export type ModelRoute = (app: AppContext, ctx: RouteContext) => Promise<void> | void;

/** What a request says about its model: the name it asks for and whether it streams. */
async function askedFor(app: AppContext, ctx: RouteContext): Promise<{ name: string | null; stream: boolean }> {
  const { req } = ctx;
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  // GET routes, and a POST without a body (a session restore): ?model= or none.
  if (req.method !== 'POST' || !hasBody) return { name: ctx.url.searchParams.get('model'), stream: false };
  const body = await readJson(ctx.req, app.bodies);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { name: null, stream: false };
  const b = body as Record<string, unknown>;
  // Any other `model` value is the route's schema's to refuse.
  return { name: typeof b.model === 'string' ? b.model : null, stream: b.stream === true };
}

/**
 * `implied`: the model a request means when it names none, if that model is served (a session
 * restore: the model the session was saved with).
 */
export function routedTo(
  role: ModelRole | null, route: ModelRoute, implied?: (front: AppContext, ctx: RouteContext) => Promise<string | null>,
): (front: AppContext, ctx: RouteContext) => Promise<void> {
  return async (front, ctx) => {
    const models = front.models;
    const asked = await askedFor(front, ctx);
    let name = asked.name;
    if (name === null && implied && models.several) {
      const guess = await implied(front, ctx);
      if (guess !== null && models.rows().some((r) => r.name === guess)) name = guess;
    }
    const stream = asked.stream;
    const picked = models.pick(name, role);
    const waiting = stream && models.state(picked) !== 'loaded'
      ? new SseStream(new ClientConnection(ctx.res, front.config.writeStallMs), { keepAliveMs: front.config.keepAliveMs })
      : null;
    waiting?.setWaiting(true);
    let lease;
    try {
      lease = await models.acquire(picked);
    } catch (e) {
      if (!waiting?.isStarted) throw e;
      waiting.fail(toApiError(e).toJSON());
      return;
    } finally {
      waiting?.setWaiting(false);
    }
    try {
      // The client left while its model loaded: nothing to answer, no engine work to start.
      if (ctx.res.destroyed) return;
      await route(lease.app, ctx);
    } finally {
      lease.release();
    }
  };
}
