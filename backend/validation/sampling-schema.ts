// The one sampling parser: each API names the fields it has (chat completions and completions all
// of them, Messages temperature, top_p and top_k, Responses temperature and top_p), and a field is
// checked the same way wherever it is accepted. Only the fields the client set come back, as the
// engine's own SamplingParams.
import type { SamplingParams } from '../../native/lib/addon.js';
import { checkArray, checkNumber, fail, field, get, optNumber, requireObject, type Json } from './validate.js';

export const SAMPLING_FIELDS = [
  'temperature', 'top_p', 'top_k', 'min_p', 'seed', 'frequency_penalty', 'presence_penalty', 'repeat_penalty',
  'repeat_last_n', 'logit_bias',
] as const;
export type SamplingField = (typeof SAMPLING_FIELDS)[number];

/** {"123": -5, "7": false} or [[123, -5], [7, false]]; false bans the token (-Infinity). */
function parseLogitBias(obj: Json): Array<[number, number]> | undefined {
  const v = get(obj, 'logit_bias');
  if (v === undefined) return undefined;
  const pairs: Array<[unknown, unknown, string]> = Array.isArray(v)
    ? v.map((p, i) => {
      const pp = field('logit_bias', i);
      const pair = checkArray(p, pp);
      if (pair.length !== 2) fail(pp, 'must be a [token id, bias] pair');
      return [pair[0], pair[1], pp] as [unknown, unknown, string];
    })
    : Object.entries(requireObject(v, 'logit_bias')).map(([k, b]) => [/^\d+$/.test(k) ? Number(k) : k, b, field('logit_bias', k)]);
  return pairs.map(([id, bias, path]) => {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) fail(path, 'token id must be a non-negative integer');
    if (bias === false) return [id, -Infinity];
    return [id, checkNumber(bias, path, { min: -100, max: 100 })];
  });
}

export function parseSampling(obj: Json, fields: readonly SamplingField[] = SAMPLING_FIELDS): SamplingParams {
  const on = new Set<SamplingField>(fields);
  const s: SamplingParams = {};
  const set = <K extends keyof SamplingParams>(key: K, value: SamplingParams[K] | undefined): void => {
    if (value !== undefined) s[key] = value;
  };
  const opt = (name: SamplingField, o: Parameters<typeof optNumber>[3]) => (on.has(name) ? optNumber(obj, name, '', o) : undefined);
  set('temperature', opt('temperature', { min: 0, max: 2 }));
  set('topP', opt('top_p', { min: 0, minExclusive: true, max: 1 }));
  set('topK', opt('top_k', { integer: true, min: 0 }));
  set('minP', opt('min_p', { min: 0, max: 1 }));
  set('seed', opt('seed', { integer: true }));
  set('frequencyPenalty', opt('frequency_penalty', { min: -2, max: 2 }));
  set('presencePenalty', opt('presence_penalty', { min: -2, max: 2 }));
  set('repeatPenalty', opt('repeat_penalty', { min: 0, minExclusive: true }));
  set('repeatLastN', opt('repeat_last_n', { integer: true, min: -1 }));
  if (on.has('logit_bias')) set('logitBias', parseLogitBias(obj));
  return s;
}

