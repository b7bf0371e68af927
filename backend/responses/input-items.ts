// GET /v1/responses/{id}/input_items: the items a stored response read (the conversation before
// its output, earlier turns of a previous_response_id chain included), as the OpenAI SDK pages
// them: `order` (desc by default), `limit` (1-100, 20 by default) and `after` (the id of the last
// item of the page before). Input items get their ids when their response is stored (withIds), so
// a cursor names the same item on every call.
import type { ConversationItem, InputItem, InputItemList } from '../../contract/responses.js';
import { fail } from '../validation/validate.js';

export interface PageQuery { order: 'asc' | 'desc'; limit: number; after: string | null }

const MAX_LIMIT = 100;

/** The page query from a URL's search parameters; 400 naming the parameter when one is malformed. */
export function parsePageQuery(params: URLSearchParams): PageQuery {
  const order = params.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') fail('order', `must be asc or desc, got ${JSON.stringify(order)}`);
  const rawLimit = params.get('limit');
  const limit = rawLimit === null ? 20 : Number(rawLimit);
  if (!/^\d+$/.test(rawLimit ?? '20') || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    fail('limit', `must be an integer from 1 to ${MAX_LIMIT}, got ${JSON.stringify(rawLimit)}`);
  }
  const after = params.get('after');
  if (after !== null && after === '') fail('after', 'must be an item id');
  return { order, limit, after };
}

/** Gives every item without an id one (`<kind>_<tag>_<n>`): the ids input_items lists them by. */
export function withIds(items: readonly ConversationItem[], tag: string): ConversationItem[] {
  let n = 0;
  return items.map((item) => {
    if (item.id !== undefined) return item;
    const kind = item.type === 'message' ? 'msg' : item.type === 'function_call' ? 'fc' : 'fco';
    return { ...item, id: `${kind}_${tag}_in${n++}` };
  });
}

/** An item as input_items shows it: with its id and status, a message's text as content parts. */
function listed(item: ConversationItem, index: number): InputItem {
  const id = item.id ?? `item_${index}`;
  if (item.type === 'message' && !('status' in item)) {
    const part = item.role === 'assistant' ? 'output_text' : 'input_text';
    const content = typeof item.content === 'string' ? [{ type: part, text: item.content }] : item.content.map((p) => ({ ...p }));
    return { type: 'message', id, status: 'completed', role: item.role, content };
  }
  if (item.type === 'function_call' || item.type === 'function_call_output') {
    return { ...item, id, status: 'status' in item ? item.status : 'completed' } as InputItem;
  }
  return item as InputItem;
}

/** One page of `items` (oldest first as stored); 400 naming `after` when it names no item of them. */
export function inputItemsPage(items: readonly ConversationItem[], q: PageQuery): InputItemList {
  const all = items.map(listed);
  if (q.order === 'desc') all.reverse();
  let start = 0;
  if (q.after !== null) {
    const at = all.findIndex((i) => i.id === q.after);
    if (at < 0) fail('after', `no input item ${q.after} in this response`);
    start = at + 1;
  }
  const data = all.slice(start, start + q.limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + q.limit < all.length };
}
