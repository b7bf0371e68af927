// OpenAI's predicted outputs: `prediction: {type: "content", content}` on chat and text
// completions, where content is a string or an array of text parts (joined). The text is the
// speculative draft of the answer (the engine verifies it), never part of the prompt.
import { checkArray, checkString, fail, field, get, requireObject, typeName, type Json } from './validate.js';

/** The prediction's text; null when the request has none. An empty text is a prediction that drafts nothing. */
export function parsePrediction(obj: Json): string | null {
  const v = get(obj, 'prediction');
  if (v === undefined) return null;
  const p = requireObject(v, 'prediction');
  const type = get(p, 'type');
  if (type !== 'content') {
    const got = typeof type === 'string' ? JSON.stringify(type) : typeName(type);
    fail('prediction.type', `must be "content", got ${got}`);
  }
  const content = get(p, 'content');
  if (content === undefined) fail('prediction.content', 'is required', 'missing_required_parameter');
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) fail('prediction.content', `must be a string or an array of text parts, got ${typeName(content)}`);
  return checkArray(content, 'prediction.content').map((part, i) => {
    const path = field('prediction.content', i);
    const o = requireObject(part, path);
    if (get(o, 'type') !== 'text') fail(field(path, 'type'), 'must be "text"');
    return checkString(get(o, 'text'), field(path, 'text'));
  }).join('');
}
