// Sessions: GET /v1/sessions, POST /v1/sessions {name, messages}, GET/DELETE
// /v1/sessions/{name}, POST /v1/sessions/{name}/restore.
import { parseSessionSaveRequest, sanitizeSessionName } from '../../validation/schemas.js';
import type { SessionListBody } from '../../../contract/sessions.js';
import type { AppContext } from '../app-context.js';
import { readJson, sendJson } from '../respond.js';
import type { RouteContext } from '../router.js';

export async function sessionsList(app: AppContext, { res }: RouteContext): Promise<void> {
  const body: SessionListBody = { object: 'list', data: await app.sessions.list() };
  sendJson(res, 200, body);
}

export async function sessionSave(app: AppContext, { req, res }: RouteContext): Promise<void> {
  const body = parseSessionSaveRequest(await readJson(req, app.bodies));
  sendJson(res, 201, await app.sessions.save(body));
}

export async function sessionGet(app: AppContext, { res, params }: RouteContext): Promise<void> {
  sendJson(res, 200, await app.sessions.get(sanitizeSessionName(params.name)));
}

export async function sessionRestore(app: AppContext, { res, params }: RouteContext): Promise<void> {
  sendJson(res, 200, await app.sessions.restore(sanitizeSessionName(params.name)));
}

export async function sessionDelete(app: AppContext, { res, params }: RouteContext): Promise<void> {
  const name = sanitizeSessionName(params.name);
  await app.sessions.remove(name);
  sendJson(res, 200, { name, deleted: true });
}
