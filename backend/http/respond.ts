// JSON answers and errors. Every error leaves as {"error": {message, type, code, param}}.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiError, type ApiError } from '../validation/errors.js';
import { parseJsonBody } from '../validation/schemas.js';
import { BodyBudgetSpent, BodyTimedOut, BodyTooLarge, type BodyReader } from './body.js';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) { res.end(); return; }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, text: string, contentType: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  if (err.status === 503 && !headers['Retry-After']) headers = { ...headers, 'Retry-After': '1' };
  sendJson(res, err.status, err.toJSON(), headers);
}

/** Bodies read before their route ran (model routing reads `model` first): the route reads the same value. */
const readAlready = new WeakMap<IncomingMessage, Promise<unknown>>();

/**
 * Reads and parses a JSON body: 413 over the limit, 503 while other bodies hold the read budget,
 * 408 when it does not arrive in time, 415 not JSON, 400 malformed. Read once per request.
 */
export function readJson(req: IncomingMessage, reader: BodyReader): Promise<unknown> {
  let body = readAlready.get(req);
  if (!body) {
    body = readJsonOnce(req, reader);
    readAlready.set(req, body);
  }
  return body;
}

async function readJsonOnce(req: IncomingMessage, reader: BodyReader): Promise<unknown> {
  let raw: Buffer;
  try {
    raw = await reader.read(req);
  } catch (e) {
    if (e instanceof BodyTooLarge) {
      throw apiError('request_too_large', `request body is larger than the limit of ${e.limit} bytes (--body-limit-mib)`);
    }
    if (e instanceof BodyBudgetSpent) {
      throw apiError('body_budget_spent', `${e.message} (the server reads at most ${e.budget} bytes of bodies at once)`);
    }
    if (e instanceof BodyTimedOut) {
      throw apiError('body_timeout', `${e.message} (--body-timeout-ms)`);
    }
    throw apiError('invalid_body', (e as Error).message);
  }
  return parseJsonBody(raw, req.headers['content-type'], reader.limitBytes);
}
