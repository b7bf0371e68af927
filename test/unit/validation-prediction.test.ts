// OpenAI's `prediction` field: a string or text parts (joined), null when absent; anything else
// is a 400 naming the exact field.
import { describe, expect, it } from 'vitest';
import { parsePrediction } from '../../backend/validation/prediction-schema.js';
import { ApiError } from '../../backend/validation/errors.js';

function paramOf(fn: () => unknown): string | null | undefined {
  try { fn(); } catch (e) { if (e instanceof ApiError) return e.param; throw e; }
  return undefined;
}

describe('parsePrediction', () => {
  it('reads a string, text parts and absence', () => {
    expect(parsePrediction({})).toBeNull();
    expect(parsePrediction({ prediction: null })).toBeNull();
    expect(parsePrediction({ prediction: { type: 'content', content: 'abc' } })).toBe('abc');
    expect(parsePrediction({ prediction: { type: 'content', content: '' } })).toBe('');
    expect(parsePrediction({ prediction: { type: 'content', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] } })).toBe('ab');
  });

  it('names the field that is wrong', () => {
    expect(paramOf(() => parsePrediction({ prediction: 'abc' }))).toBe('prediction');
    expect(paramOf(() => parsePrediction({ prediction: { content: 'x' } }))).toBe('prediction.type');
    expect(paramOf(() => parsePrediction({ prediction: { type: 'content' } }))).toBe('prediction.content');
    expect(paramOf(() => parsePrediction({ prediction: { type: 'content', content: { text: 'x' } } }))).toBe('prediction.content');
    expect(paramOf(() => parsePrediction({ prediction: { type: 'content', content: ['x'] } }))).toBe('prediction.content[0]');
    expect(paramOf(() => parsePrediction({ prediction: { type: 'content', content: [{ type: 'text' }] } }))).toBe('prediction.content[0].text');
  });
});
