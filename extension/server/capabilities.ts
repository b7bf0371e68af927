// What a role's server can do, read from the server itself: its models (/v1/models), llama-server's
// /props (context per slot, whether the chat template takes tools) and whether the route the role
// needs answers. A server without that route turns the role's feature off; the caller logs it once.
import { StrataApiError, type StrataClient } from '../client/client.js';
import { obj, propsSlotContext } from '../client/normalize.js';
import type { ModelUse } from '../config/server-settings.js';

/** The routes a role may use, in order of preference (llama-server has /infill, not /v1/infill). */
export const ROLE_ROUTES: Record<ModelUse, readonly string[]> = {
  completion: ['/v1/infill', '/infill'],
  chat: ['/v1/chat/completions'],
  nextEdit: ['/v1/edits/next'],
  embedding: ['/v1/embeddings'],
  rerank: ['/v1/rerank'],
};

/** The feature each role serves, as the log names it. */
export const ROLE_FEATURE: Record<ModelUse, string> = {
  completion: 'inline completions', chat: 'chat, the agent and inline edits', nextEdit: 'next-edit suggestions',
  embedding: 'codebase embeddings', rerank: 'codebase reranking',
};

/**
 * What an empty POST's status says about a route: 404 or 405, no such route; 501, llama-server's
 * "start it with --embeddings / --reranking"; 401 or 403, the key is wrong; anything else (400 or
 * 422 for the missing fields), the route is there.
 */
export function routeAnswer(status: number): 'yes' | 'no' | 'key' {
  if (status === 401 || status === 403) return 'key';
  if (status === 404 || status === 405 || status === 501) return 'no';
  return 'yes';
}

export interface RoleCapabilities {
  role: ModelUse;
  /** The models /v1/models lists. */
  models: string[];
  /** The route the role's requests go to; null: the server has none of them (the feature is off). */
  route: string | null;
  /** The statuses that ruled the routes out, for the log ("/v1/edits/next 404"). */
  refused: string[];
  /** Context per slot the server reports (/v1/models meta or /props), when it does. */
  contextPerSlot: number | null;
  /** Chat: whether the chat template takes tools (llama-server's /props chat_template_caps), when the server says. */
  toolCalls: boolean | null;
}

export class RoleKeyRefused extends Error {
  constructor(readonly url: string, readonly status: number) {
    super(`${url} refused the key (${status}): set it with "Strata: Set Role Server API Key"`);
  }
}

/** Reads the server's capabilities for the role; throws when it cannot be reached or refuses the key. */
export async function probeRole(client: StrataClient, role: ModelUse, signal?: AbortSignal): Promise<RoleCapabilities> {
  const models = await client.models(signal).catch((e: unknown) => {
    const status = e instanceof StrataApiError ? e.status : 0;
    throw routeAnswer(status) === 'key' ? new RoleKeyRefused(client.baseUrl, status) : e;
  });
  const props = await client.props(signal).catch(() => null);
  const refused: string[] = [];
  let route: string | null = null;
  for (const path of ROLE_ROUTES[role]) {
    const status = await client.routeStatus(path, signal);
    const answer = routeAnswer(status);
    if (answer === 'key') throw new RoleKeyRefused(client.baseUrl, status);
    if (answer === 'yes') { route = path; break; }
    refused.push(`${path} ${status}`);
  }
  const caps = obj(obj(props).chat_template_caps);
  const fromProps = typeof caps.supports_tool_calls === 'boolean' ? caps.supports_tool_calls : typeof caps.supports_tools === 'boolean' ? caps.supports_tools : null;
  return {
    role, models: models.map((m) => m.id), route, refused,
    contextPerSlot: role === 'chat' ? await client.chatSlotContext(signal) : props ? propsSlotContext(props) : null,
    toolCalls: role === 'chat' ? fromProps : null,
  };
}

/** One line for the log: where the role runs and what its server said. */
export function describeCapabilities(url: string, c: RoleCapabilities): string {
  if (c.route === null) return `${ROLE_FEATURE[c.role]} off: ${url} has no ${ROLE_ROUTES[c.role].join(' or ')} (${c.refused.join(', ')})`;
  const parts = [`models ${c.models.join(', ') || 'none listed'}`];
  if (c.contextPerSlot !== null) parts.push(`${c.contextPerSlot} tokens of context per slot`);
  if (c.toolCalls !== null) parts.push(c.toolCalls ? 'tool calls' : 'no tool calls');
  return `${ROLE_FEATURE[c.role]} on ${url} (${c.route}): ${parts.join('; ')}`;
}
