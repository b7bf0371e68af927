// Model settings with a role on its own server (strata.*ServerUrl) and `hf:` references: the
// managed server leaves a role with its own server out, and an `hf:` model becomes the file pulled
// from a stand-in of the Hub (the same pull `strata pull` and Choose Models use).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HubRef } from '../../common/hub/hub-ref.js';
import { pullModel } from '../../common/hub/pull.js';
import { resolveHubModels } from '../../extension/config/hub-settings.js';
import { buildServeArgs, DEFAULT_SETTINGS, requestModels, servedModels } from '../../extension/config/server-settings.js';
import { FakeHub } from '../helpers/fake-hub.js';

describe('a role on its own server', () => {
  it('its model is not served by the managed server, and its name is not sent there', () => {
    const s = { ...DEFAULT_SETTINGS, modelPath: '/m/coder.gguf', chatModel: '/m/chat.gguf', embeddingModel: '/m/embed.gguf', roleUrls: { chat: 'http://team:8080' } };
    expect(servedModels(s).models.map((m) => m.path)).toEqual(['/m/coder.gguf', '/m/embed.gguf']);
    expect(requestModels(s, 'managed')).toEqual({ completion: 'coder', embedding: 'embed', nextEdit: 'coder' });
    expect(buildServeArgs(s, 1).join(' ')).not.toContain('chat.gguf');
  });

  it('next edit does not fall back to a completion model that lives on another server', () => {
    const s = { ...DEFAULT_SETTINGS, modelPath: '/m/main.gguf', completionModel: '/m/coder.gguf', roleUrls: { completion: 'http://box:8080' } };
    expect(servedModels(s).models.map((m) => m.path)).toEqual(['/m/main.gguf']);
    expect(requestModels(s, 'managed')).toEqual({ chat: 'main', embedding: 'main', nextEdit: 'main' });
  });

  it('an hf: reference is a model to pull, never a served name', () => {
    expect(requestModels({ ...DEFAULT_SETTINGS, chatModel: 'hf:org/chat-GGUF:Q4_K_M', completionModel: 'coder' }, 'remote')).toEqual({ completion: 'coder', nextEdit: 'coder' });
  });
});

describe('hf: model settings', () => {
  let hub: FakeHub;
  let dir = '';
  const body = Buffer.alloc(4096, 7);
  beforeAll(async () => {
    hub = await FakeHub.start();
    hub.addRepo('org/coder-GGUF', [{ path: 'coder-Q8_0.gguf', body }, { path: 'coder-Q4_K_M.gguf', body: Buffer.alloc(2048, 4) }]);
    dir = mkdtempSync(join(tmpdir(), 'strata-hf-settings-'));
  });
  afterAll(async () => {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const pull = (ref: HubRef): Promise<string> =>
    pullModel({ ref, dir, env: { HF_ENDPOINT: hub.endpoint }, signal: new AbortController().signal }).then((r) => r.path);

  it('each becomes the pulled file; the rest stay as written; a role on its own server is not pulled', async () => {
    const asked: string[] = [];
    const s = await resolveHubModels({
      ...DEFAULT_SETTINGS, completionModel: 'hf:org/coder-GGUF:q8_0', modelPath: '/m/main.gguf', chatModel: 'hf:org/chat-GGUF', roleUrls: { chat: 'http://team:8080' },
    }, (ref, setting) => { asked.push(setting); return pull(ref); });
    expect(asked).toEqual(['strata.completionModel']);
    expect(s.completionModel).toBe(join(dir, 'org', 'coder-GGUF', 'coder-Q8_0.gguf'));
    expect(readFileSync(s.completionModel).equals(body)).toBe(true);
    expect(s.modelPath).toBe('/m/main.gguf');
    expect(servedModels(s).models.map((m) => m.name)).toEqual(['main', 'coder-Q8_0']);
    // Present now: the next start asks the Hub nothing.
    hub.requests.length = 0;
    await resolveHubModels({ ...DEFAULT_SETTINGS, completionModel: 'hf:org/coder-GGUF:q8_0' }, pull);
    expect(hub.requests).toEqual([]);
  });

  it('a malformed reference is refused naming its setting, and nothing is pulled', async () => {
    const asked: string[] = [];
    await expect(resolveHubModels({ ...DEFAULT_SETTINGS, chatModel: 'hf:not-a-repo' }, async (_r, s) => { asked.push(s); return ''; }))
      .rejects.toThrow("strata.chatModel: 'hf:not-a-repo' is not ORG/REPO[:QUANT] or ORG/REPO/FILE.gguf");
    expect(asked).toEqual([]);
  });
});
