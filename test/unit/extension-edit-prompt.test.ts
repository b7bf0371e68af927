import { describe, expect, it } from 'vitest';
import { EDIT_SYSTEM_PROMPT, editMessages, extractCode } from '../../extension/edit/edit-prompt.js';
import { conversationFromHistory } from '../../extension/chat/history.js';
import { validateFromWebview } from '../../contract/panel.js';

describe('inline edit prompt', () => {
  it('sends the selection with the code around it and the instruction', () => {
    const msgs = editMessages({ instruction: 'rename x to count', path: 'a.py', language: 'python', code: 'x = 1\n', before: 'import os\n', after: 'print(x)', startLine: 2 });
    expect(msgs[0]).toEqual({ role: 'system', content: EDIT_SYSTEM_PROMPT });
    expect(msgs[1]!.content).toBe('Code before the selection (do not repeat it):\nFile a.py:\n```python\nimport os\n\n```\n\n'
      + 'Selected code from a.py (lines 2-3):\n```python\nx = 1\n\n```\n\nCode after the selection (do not repeat it):\nFile a.py:\n```python\nprint(x)\n```\n\nInstruction: rename x to count');
  });

  it('takes the first fenced block of the answer (closed or not), else the whole answer; keeps the trailing newline', () => {
    expect(extractCode('Sure:\n```python\ncount = 1\n```\nDone.', 'x = 1\n')).toBe('count = 1\n');
    expect(extractCode('```\ncount = 1', 'x = 1')).toBe('count = 1');
    expect(extractCode('  count = 1  ', 'x = 1')).toBe('count = 1');
    expect(extractCode('```python\n```', 'x')).toBeNull();
    expect(extractCode('', 'x')).toBeNull();
  });
});

describe('participant history', () => {
  it('keeps progress lines and the trimming preface out of the answer sent back', () => {
    const P = 'strata.chat';
    const conv = conversationFromHistory([
      { prompt: 'q', participant: P },
      { participant: P, response: [{ value: 'Thinking…' }, { value: { value: '*Trimmed to fit: left out a.ts.*\n\n' } }, { value: { value: 'the answer' } }], result: { metadata: { preface: '*Trimmed to fit: left out a.ts.*\n\n' } } },
    ], P);
    expect(conv).toEqual([{ role: 'user', content: 'q' }, { role: 'assistant', content: 'the answer' }]);
  });
});

describe('panel messages with context and code', () => {
  it('accepts well-formed ones and names what is wrong otherwise', () => {
    const ctx = { id: 'i', kind: 'file', path: 'a.ts', range: null, language: 'ts', text: 'x', tokens: 1 };
    expect(validateFromWebview({ type: 'chatSend', chatId: 'c', name: 'n', messages: [{ role: 'user', content: 'q' }], context: [ctx] }).ok).toBe(true);
    expect(validateFromWebview({ type: 'chatSend', chatId: 'c', name: 'n', messages: [{ role: 'user', content: 'q' }], context: [{ ...ctx, range: { startLine: 0, endLine: 1 } }] }))
      .toEqual({ ok: false, reason: 'chatSend context is malformed' });
    expect(validateFromWebview({ type: 'chatSend', chatId: 'c', name: 'n', messages: [{ role: 'assistant', content: 'a' }] }))
      .toEqual({ ok: false, reason: 'chatSend needs messages ending with the question' });
    expect(validateFromWebview({ type: 'contextRequest', what: 'disk' })).toEqual({ ok: false, reason: 'unknown context request disk' });
    expect(validateFromWebview({ type: 'insertCode', code: 5 })).toEqual({ ok: false, reason: 'insertCode needs code' });
    expect(validateFromWebview({ type: 'applyCode', code: 'x', language: null }).ok).toBe(true);
    expect(validateFromWebview({ type: 'copy', text: 'x'.repeat(2_000_001) })).toEqual({ ok: false, reason: 'copy needs text' });
    expect(validateFromWebview({ type: 'estimate', id: 1, messages: [{ role: 'user', content: 'q' }], context: [] }).ok).toBe(true);
  });
});
