import { describe, expect, it } from 'vitest';
import { SseDecoder as SseParser } from '../../common/net/sse-decoder.js';

const stream = 'data: {"a":1}\n\n: keep-alive\n\ndata: {"b":2}\r\n\r\nevent: done\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n';

describe('SseDecoder (strata bench)', () => {
  it('parses events, comments, CRLF and multi-line data', () => {
    const p = new SseParser();
    const events = p.feed(stream);
    expect(events).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'message', data: '{"b":2}' },
      { event: 'done', data: 'line1\nline2' },
      { event: 'message', data: '[DONE]' },
    ]);
    expect(p.commentCount).toBe(1);
  });

  it('gives the same events whatever the chunk boundaries', () => {
    const whole = new SseParser().feed(stream);
    for (let size = 1; size <= 7; size++) {
      const p = new SseParser();
      const got = [];
      for (let i = 0; i < stream.length; i += size) got.push(...p.feed(stream.slice(i, i + size)));
      got.push(...p.end());
      expect(got).toEqual(whole);
    }
  });

  it('treats a lone CR as a line end, also when the LF comes in the next chunk', () => {
    const p = new SseParser();
    expect(p.feed('data: x\r')).toEqual([]);
    expect(p.feed('\r')).toEqual([{ event: 'message', data: 'x' }]);
    const q = new SseParser();
    expect(q.feed('data: y\r')).toEqual([]);
    expect(q.feed('\n\r\n')).toEqual([{ event: 'message', data: 'y' }]);
  });

  it('keeps data without a space after the colon and dispatches a last event at end()', () => {
    const p = new SseParser();
    expect(p.feed('data:{"c":3}\ndata')).toEqual([]);
    expect(p.end()).toEqual([{ event: 'message', data: '{"c":3}\n' }]);
  });

  it('ignores id and retry fields', () => {
    expect(new SseParser().feed('id: 7\nretry: 100\ndata: z\n\n')).toEqual([{ event: 'message', data: 'z' }]);
  });
});
