// `hf:ORG/REPO[:QUANT]` and `hf:ORG/REPO/FILE.gguf` in the model settings: each becomes the local
// file the managed server loads, pulled into the models folder `strata pull` uses (the caller
// pulls, with progress). Pure but for the pull it is given.
import { isHubModel, parseHubRef, type HubRef } from '../../common/hub/hub-ref.js';
import type { ServerSettings } from './server-settings.js';

/** The model settings that may hold `hf:…`, and the role whose own server makes the value moot. */
const HUB_FIELDS = [
  ['modelPath', null], ['completionModel', 'completion'], ['chatModel', 'chat'], ['nextEditModel', 'nextEdit'],
  ['embeddingModel', 'embedding'], ['rerankModel', 'rerank'],
] as const;

/**
 * The settings with each `hf:` model replaced by its local file, pulled first when missing (offline
 * with the file there, nothing is asked). A malformed reference is an error naming its setting.
 */
export async function resolveHubModels(s: ServerSettings, pull: (ref: HubRef, setting: string) => Promise<string>): Promise<ServerSettings> {
  const out = { ...s };
  for (const [field, role] of HUB_FIELDS) {
    const v = s[field].trim();
    if (!isHubModel(v) || (role !== null && s.roleUrls[role])) continue;
    let ref: HubRef;
    try { ref = parseHubRef(v); } catch (e) { throw new Error(`strata.${field}: ${(e as Error).message}`); }
    out[field] = await pull(ref, `strata.${field}`);
  }
  return out;
}
