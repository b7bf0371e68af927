import { applyPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { DocumentHistory, EditHistory, estimateTokens, type TextChange } from '../../extension/next-edit/edit-history.js';

const SRC = 'def area(width, height):\n    return width * height\n\n\nprint(area(2, 3))\n';

function doc(text = SRC, opts?: ConstructorParameters<typeof DocumentHistory>[3]): DocumentHistory {
  let seq = 0;
  return new DocumentHistory('geo.py', text, () => ++seq, opts);
}

/** Typing `text` at (line, character) one key at a time, as VS Code reports it. */
function type(d: DocumentHistory, line: number, character: number, text: string): void {
  for (const ch of text) {
    d.apply({ startLine: line, startCharacter: character, endLine: line, endCharacter: character, text: ch });
    if (ch === '\n') { line++; character = 0; } else character++;
  }
}

/** Backspace `n` times from (line, character). */
function backspace(d: DocumentHistory, line: number, character: number, n: number): void {
  for (let i = 0; i < n; i++, character--) d.apply({ startLine: line, startCharacter: character - 1, endLine: line, endCharacter: character, text: '' });
}

describe('DocumentHistory', () => {
  it('merges typing in one place into one diff, numbered as the file', () => {
    const d = doc();
    backspace(d, 0, 14, 4); // width -> w
    expect(d.text()).toBe(SRC.replace('area(width', 'area(w'));
    expect(d.events().map((e) => e.diff)).toEqual([
      '@@ -1,3 +1,3 @@\n-def area(width, height):\n+def area(w, height):\n     return width * height\n ',
    ]);
    expect(d.liveRange()).toEqual({ startLine: 0, endLine: 0 });
  });

  it('starts a new edit elsewhere and keeps the closed one as it was', () => {
    const d = doc();
    backspace(d, 0, 14, 4);
    type(d, 4, 11, '0'); // print(area(02, 3)) three lines below: not one place
    const diffs = d.events().map((e) => e.diff);
    expect(diffs).toHaveLength(2);
    expect(diffs[0]).toBe('@@ -1,3 +1,3 @@\n-def area(width, height):\n+def area(w, height):\n     return width * height\n ');
    expect(diffs[1]).toBe('@@ -3,3 +3,3 @@\n \n \n-print(area(2, 3))\n+print(area(02, 3))');
    expect(d.liveRange()).toEqual({ startLine: 4, endLine: 4 });
  });

  it('merges a new line typed below the edit (Enter, then the line) into it', () => {
    const d = doc();
    type(d, 1, 25, '\n    # area');
    expect(d.events().map((e) => e.diff)).toEqual([
      '@@ -1,4 +1,5 @@\n def area(width, height):\n     return width * height\n+    # area\n \n ',
    ]);
  });

  it('an edit typed and taken back tells nothing', () => {
    const d = doc();
    type(d, 4, 0, 'x');
    backspace(d, 4, 1, 1);
    expect(d.events()).toEqual([]);
    type(d, 0, 0, '#'); // elsewhere: closes the empty edit, which is not kept
    expect(d.events()).toHaveLength(1);
  });

  it('a pasted block and a deletion of whole lines are one diff each', () => {
    const d = doc(`${SRC}\n\n\nprint(area(4, 5))\n`);
    d.apply({ startLine: 2, startCharacter: 0, endLine: 2, endCharacter: 0, text: 'def perimeter(w, h):\n    return 2 * (w + h)\n' });
    d.apply({ startLine: 10, startCharacter: 0, endLine: 11, endCharacter: 0, text: '' });
    const [paste, cut] = d.events().map((e) => e.diff);
    expect(paste).toBe('@@ -1,4 +1,6 @@\n def area(width, height):\n     return width * height\n+def perimeter(w, h):\n+    return 2 * (w + h)\n \n ');
    expect(cut).toBe('@@ -9,3 +9,2 @@\n \n \n-print(area(4, 5))');
    expect(d.text()).toBe('def area(width, height):\n    return width * height\ndef perimeter(w, h):\n    return 2 * (w + h)\n\n\nprint(area(2, 3))\n\n\n\n');
  });

  it('keeps the newest closed edits only', () => {
    const text = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    const d = doc(text, { mergeLines: 1, contextLines: 0, maxEdits: 3 });
    for (let i = 0; i < 6; i++) type(d, i * 5, 0, 'x');
    const diffs = d.events().map((e) => e.diff);
    // 3 closed + the one being made; the oldest two closed ones are gone.
    expect(diffs).toHaveLength(4);
    expect(diffs[0]).toBe('@@ -11,1 +11,1 @@\n-line 10\n+xline 10');
    expect(diffs[3]).toBe('@@ -26,1 +26,1 @@\n-line 25\n+xline 25');
  });

  it('over many random edits, replaying the diffs in order on the first text gives the text (and the copy stays the text)', () => {
    let rand = 12345;
    const next = (n: number): number => { rand = (rand * 1103515245 + 12345) % 2 ** 31; return rand % n; };
    const alphabet = ['a', 'b', ' ', '\n', 'xy', '(', ')', '\n  '];
    for (let round = 0; round < 60; round++) {
      const start = Array.from({ length: 12 }, (_, i) => `row ${i} ${'z'.repeat(next(6))}`).join('\n') + (round % 2 ? '\n' : '');
      const d = doc(start, { mergeLines: 1, contextLines: 2, maxEdits: 1000 });
      let model = start;
      let at = 0;
      for (let step = 0; step < 80; step++) {
        // Mostly near the last edit, sometimes anywhere.
        at = next(4) === 0 ? next(model.length + 1) : Math.max(0, Math.min(model.length, at + next(7) - 3));
        const del = next(3) === 0 ? next(Math.min(8, model.length - at) + 1) : 0;
        const ins = next(4) === 0 ? '' : alphabet[next(alphabet.length)]!;
        const pos = (off: number): { line: number; character: number } => {
          const before = model.slice(0, off).split('\n');
          return { line: before.length - 1, character: before[before.length - 1]!.length };
        };
        const a = pos(at);
        const b = pos(at + del);
        const change: TextChange = { startLine: a.line, startCharacter: a.character, endLine: b.line, endCharacter: b.character, text: ins };
        d.apply(change);
        model = model.slice(0, at) + ins + model.slice(at + del);
        at += ins.length;
        expect(d.text(), `round ${round} step ${step}`).toBe(model);
      }
      const lined = (t: string): string => t.split('\n').map((l) => `${l}\n`).join('');
      let replay = lined(start);
      for (const e of d.events()) {
        const out = applyPatch(replay, e.diff);
        expect(out, `round ${round}: ${e.diff}`).not.toBe(false);
        replay = out as string;
      }
      expect(replay, `round ${round}`).toBe(lined(model));
    }
  });
});

describe('EditHistory', () => {
  it('lists edits across files oldest first within the count and token budget, the newest cut to fit', () => {
    const h = new EditHistory();
    const a = h.open('file:///a.py', 'a.py', 'one\ntwo\nthree\nfour\nfive\n');
    const b = h.open('file:///b.py', 'b.py', 'alpha\nbeta\n');
    type(a, 0, 3, '!');
    type(b, 1, 4, '?');
    type(a, 4, 4, '.'); // four lines below a's first edit: a second one
    // Opening a known document again keeps its history (the text given is not read).
    expect(h.open('file:///a.py', 'a.py', 'ignored').text()).toBe('one!\ntwo\nthree\nfour\nfive.\n');
    const all = h.recent({ maxEvents: 10, maxTokens: 10_000 });
    expect(all.map((e) => e.path)).toEqual(['a.py', 'b.py', 'a.py']);
    expect(all[2]!.diff).toContain('+five.');
    expect(h.recent({ maxEvents: 2, maxTokens: 10_000 }).map((e) => e.path)).toEqual(['b.py', 'a.py']);
    const newest = all[2]!;
    const tight = h.recent({ maxEvents: 10, maxTokens: estimateTokens(newest.path) + estimateTokens(newest.diff) });
    expect(tight).toEqual([newest]);
    const cut = h.recent({ maxEvents: 10, maxTokens: estimateTokens('a.py') + 8 });
    expect(cut).toHaveLength(1);
    expect(newest.diff.startsWith(cut[0]!.diff)).toBe(true);
    expect(cut[0]!.diff.length).toBeLessThan(newest.diff.length);
    h.forget('file:///b.py');
    expect(h.recent({ maxEvents: 10, maxTokens: 10_000 }).map((e) => e.path)).toEqual(['a.py', 'a.py']);
  });

  it('a reset (reload from disk) drops a document\'s edits', () => {
    const h = new EditHistory();
    const a = h.open('k', 'a.py', 'x\n');
    type(a, 0, 1, 'y');
    a.reset('fresh\n');
    expect(a.events()).toEqual([]);
    expect(a.text()).toBe('fresh\n');
  });
});
