// GET /v1/responses/{id}/input_items' paging (responses/input-items.ts): ids given once at store
// time, order, limit and the after cursor as the OpenAI SDK sends them, and 400 naming the
// parameter for a malformed one.
import { describe, expect, it } from 'vitest';
import type { ConversationItem } from '../../contract/responses.js';
import { inputItemsPage, parsePageQuery, withIds } from '../../backend/responses/input-items.js';

const items: ConversationItem[] = withIds([
  { type: 'message', role: 'user', content: 'one' },
  { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
  { type: 'function_call_output', call_id: 'c1', output: 'out' },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'two' }] },
  { type: 'message', role: 'user', content: 'three', id: 'msg_given' },
], 'abc');
const q = (s: string) => parsePageQuery(new URLSearchParams(s));

describe('input items', () => {
  it('gives ids once, by kind and position, keeping ids already there', () => {
    expect(items.map((i) => i.id)).toEqual(['msg_abc_in0', 'fc_abc_in1', 'fco_abc_in2', 'msg_abc_in3', 'msg_given']);
    expect(withIds(items, 'other')).toEqual(items);
  });

  it('lists newest first by default, a message\'s text as content parts, with status', () => {
    const page = inputItemsPage(items, q(''));
    expect(page.data.map((i) => i.id)).toEqual(['msg_given', 'msg_abc_in3', 'fco_abc_in2', 'fc_abc_in1', 'msg_abc_in0']);
    expect(page.data[0]).toEqual({ type: 'message', id: 'msg_given', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'three' }] });
    expect(page.data[2]).toEqual({ type: 'function_call_output', id: 'fco_abc_in2', status: 'completed', call_id: 'c1', output: 'out' });
    expect(page).toMatchObject({ object: 'list', first_id: 'msg_given', last_id: 'msg_abc_in0', has_more: false });
  });

  it('pages with limit and after, in either order', () => {
    const first = inputItemsPage(items, q('order=asc&limit=2'));
    expect(first.data.map((i) => i.id)).toEqual(['msg_abc_in0', 'fc_abc_in1']);
    expect(first.has_more).toBe(true);
    const next = inputItemsPage(items, q(`order=asc&limit=2&after=${first.last_id}`));
    expect(next.data.map((i) => i.id)).toEqual(['fco_abc_in2', 'msg_abc_in3']);
    const last = inputItemsPage(items, q(`order=asc&limit=2&after=${next.last_id}`));
    expect(last).toMatchObject({ first_id: 'msg_given', last_id: 'msg_given', has_more: false });
    expect(inputItemsPage([], q(''))).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('400 naming the parameter', () => {
    for (const [s, param] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=2.5', 'limit'], ['limit=x', 'limit'], ['order=up', 'order'], ['after=', 'after']] as const) {
      expect(() => q(s), s).toThrow(expect.objectContaining({ status: 400, param }));
    }
    expect(() => inputItemsPage(items, q('after=msg_nope'))).toThrow(expect.objectContaining({ status: 400, param: 'after' }));
  });
});
