// How the extension reads the server's settings from VS Code (vscode mocked: the configuration with
// its user and workspace values): slots, the KV type and the park's budget are null unless set (so
// the server's defaults apply), and a setting's old name is read while its new one is unset.
import { beforeEach, describe, expect, it, vi } from 'vitest';

const values: { user: Record<string, unknown>; workspace: Record<string, unknown> } = { user: {}, workspace: {} };

vi.mock('vscode', () => ({
  workspace: {
    getConfiguration: () => ({
      get: (name: string, dflt: unknown) => (name in values.workspace ? values.workspace[name] : name in values.user ? values.user[name] : dflt),
      inspect: (name: string) => ({ key: `strata.${name}`, globalValue: values.user[name], workspaceValue: values.workspace[name] }),
    }),
  },
}));

const { readServerSettings } = await import('../../extension/config/config.js');

beforeEach(() => {
  values.user = {};
  values.workspace = {};
});

describe('reading the server settings', () => {
  it('leaves slots, the KV type and the park budget unset until the user sets them', () => {
    const s = readServerSettings();
    expect([s.slots, s.kvType, s.parkMiB]).toEqual([null, null, null]);
    values.user = { slots: 4, kvType: 'q8_0' };
    values.workspace = { parkMiB: 0 };
    const set = readServerSettings();
    expect([set.slots, set.kvType, set.parkMiB]).toEqual([4, 'q8_0', 0]);
  });

  it('reads strata.cacheMiB, the old name of strata.parkMiB, while the new one is unset', () => {
    values.user = { cacheMiB: 512 };
    expect(readServerSettings().parkMiB).toBe(512);
    values.user = { cacheMiB: 512, parkMiB: 256 };
    expect(readServerSettings().parkMiB).toBe(256);
  });
});
