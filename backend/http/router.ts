// The route table: method + path pattern ("/v1/sessions/:name/restore") -> handler.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  url: URL;
}

export type Handler = (ctx: RouteContext) => Promise<void> | void;

export interface Route {
  method: string;
  pattern: string;
  handler: Handler;
  /** Needs no API key (health). */
  public?: boolean;
}

interface Compiled extends Route { parts: string[] }

export class Router {
  private readonly routes: Compiled[] = [];

  add(route: Route): this {
    this.routes.push({ ...route, parts: split(route.pattern) });
    return this;
  }

  /** The route for a request, or why there is none: 'not_found' / 'method' (with allowed methods). */
  match(method: string, path: string):
    | { route: Route; params: Record<string, string> }
    | { error: 'not_found' }
    | { error: 'method'; allowed: string[] } {
    const parts = split(path);
    const allowed: string[] = [];
    for (const r of this.routes) {
      const params = matchParts(r.parts, parts);
      if (!params) continue;
      if (r.method === method || (method === 'HEAD' && r.method === 'GET')) return { route: r, params };
      allowed.push(r.method);
    }
    return allowed.length ? { error: 'method', allowed } : { error: 'not_found' };
  }

  list(): Array<{ method: string; pattern: string }> {
    return this.routes.map((r) => ({ method: r.method, pattern: r.pattern }));
  }
}

function split(path: string): string[] {
  return path.split('/').filter((p) => p.length > 0);
}

function matchParts(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const v = parts[i]!;
    if (p.startsWith(':')) {
      let decoded: string;
      try { decoded = decodeURIComponent(v); } catch { return null; }
      params[p.slice(1)] = decoded;
    } else if (p !== v) return null;
  }
  return params;
}
