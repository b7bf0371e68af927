import { describe, expect, it } from 'vitest';
import { ApiError } from '../../backend/validation/errors.js';
import { sanitizeSessionName } from '../../backend/validation/schemas.js';
import { SessionStore } from '../../backend/sessions/session-store.js';
import { validateFromWebview } from '../../contract/panel.js';
import { sessionNameAdvice, sessionNameProblem } from '../../contract/session-name.js';

const NAMES = ['chat-1', 'A.b_c', 'x'.repeat(64), 'x'.repeat(65), 'x'.repeat(120), '', '.hidden', 'a b', 'a/b', 'naïve', 'v1.2', '-dash', '_u', 'a\u0000b', 'con', 'NUL.1', 'console'];

describe('the one session-name rule', () => {
  it('is the same for the server, its store, the panel and the commands', () => {
    for (const name of NAMES) {
      const serverTakes = (() => { try { sanitizeSessionName(name); return true; } catch (e) { expect(e).toBeInstanceOf(ApiError); return false; } })();
      const verdicts = [
        serverTakes,
        SessionStore.isSafeName(name),
        validateFromWebview({ type: 'sessionRestore', name }).ok,
        sessionNameAdvice(name) === null,
        sessionNameProblem(name) === null,
      ];
      expect(verdicts, name).toEqual(verdicts.map(() => verdicts[0]));
    }
  });
  it('names what is wrong', () => {
    expect(sessionNameProblem('x'.repeat(65))).toBe('must be 1-64 characters, got 65');
    expect(sessionNameProblem('.x')).toBe('must not start with a dot');
    expect(sessionNameProblem('a b')).toBe(`may contain only letters, digits, '.', '_' and '-' (found " ")`);
    expect(sessionNameAdvice('')).toBe('Give the conversation a name first.');
  });
});
