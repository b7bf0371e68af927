// POST /v1/rerank request, in the shapes llama-server accepts: Jina/Cohere (`query`, `documents`
// as strings or {text}, `top_n`, `return_documents`) and Hugging Face TEI (`query`, `texts`,
// `return_text`, answered as a bare array with `score`).
import { checkArray, checkString, fail, field, get, optBool, optNumber, optString, reqString, requireObject, typeName } from './validate.js';

export interface RerankRequest {
  model: string | null;
  query: string;
  documents: string[];
  /** How many results to return, best first (at most the documents' count). */
  topN: number;
  /** Echo each document's text with its result. */
  returnDocuments: boolean;
  /** TEI's shape (`texts`): the answer is an array of {index, score, text?}. */
  tei: boolean;
}

/** Documents per request, as for embedding inputs. */
export const MAX_RERANK_DOCUMENTS = 2048;

export function parseRerankRequest(body: unknown): RerankRequest {
  const obj = requireObject(body, '');
  const query = reqString(obj, 'query', '', { nonEmpty: true });
  const tei = get(obj, 'documents') === undefined && get(obj, 'texts') !== undefined;
  const key = tei ? 'texts' : 'documents';
  const raw = get(obj, key);
  if (raw === undefined) fail('documents', 'is required', 'missing_required_parameter');
  const list = checkArray(raw, key);
  if (list.length === 0) fail(key, 'must not be empty');
  if (list.length > MAX_RERANK_DOCUMENTS) fail(key, `at most ${MAX_RERANK_DOCUMENTS} documents per request, got ${list.length}`);
  const documents = list.map((d, i) => {
    const path = field(key, i);
    if (typeof d === 'string') return checkString(d, path, { nonEmpty: true });
    if (d !== null && typeof d === 'object' && !Array.isArray(d) && !tei) {
      return checkString((d as Record<string, unknown>).text, field(path, 'text'), { nonEmpty: true });
    }
    return fail(path, `must be a string${tei ? '' : ' or {"text": string}'}, got ${typeName(d)}`);
  });
  const topN = optNumber(obj, 'top_n', '', { integer: true, min: 1 }) ?? documents.length;
  const returnDocuments = (tei ? optBool(obj, 'return_text', '') : optBool(obj, 'return_documents', '')) ?? false;
  return {
    model: optString(obj, 'model', '') ?? null,
    query,
    documents,
    topN: Math.min(topN, documents.length),
    returnDocuments,
    tei,
  };
}
