import { describe, expect, it } from 'vitest';
import { settingsChangeAction } from '../../extension/server/settings-change.js';

describe('a change of server settings', () => {
  it('is applied at once after a failure (the change is the likely fix), asked about while a server runs', () => {
    expect(settingsChangeAction('failed', false)).toBe('apply');
    expect(settingsChangeAction('ready', false)).toBe('ask');
    expect(settingsChangeAction('starting', false)).toBe('ask');
  });

  it('does nothing while stopped or when the extension wrote the setting itself', () => {
    expect(settingsChangeAction('stopped', false)).toBe('ignore');
    expect(settingsChangeAction('failed', true)).toBe('ignore');
    expect(settingsChangeAction('ready', true)).toBe('ignore');
  });
});
