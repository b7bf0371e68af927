// Strata: Set Role Server API Key, and reconnecting a role's own server when its settings change.
// A key is kept for the server it was entered for: a role moved to another server asks for its key again.
import * as vscode from 'vscode';
import { keyOrigin } from '../client/key-policy.js';
import { readServerSettings, ROLE_MODEL_SETTING, ROLE_URL_SETTING, roleApiKey, roleKeySecret, roleServerUrl, storeBoundKey, storedKeyOrigin } from '../config/config.js';
import { servedModels, type ModelUse } from '../config/server-settings.js';
import type { ServerControl } from '../server/connection.js';
import { settingsChangeAction } from '../server/settings-change.js';
import { ROLE_FEATURE } from '../server/capabilities.js';
import { ROLES, type RoleServers } from '../server/role-servers.js';

type RoleItem = vscode.QuickPickItem & { role: ModelUse };

/** The model files the managed server loads: a role moving to or from its own server changes them. */
const servedFiles = (): string => servedModels(readServerSettings()).models.map((m) => m.path).join('\n');

export function registerRoleServerCommands(context: vscode.ExtensionContext, roles: RoleServers, server: ServerControl): void {
  let served = servedFiles();
  // A key kept before keys were bound to a server is bound now, to the server in the settings now.
  for (const role of ROLES) void roleApiKey(context.secrets, role).catch(() => undefined);

  const askKey = async (role: ModelUse): Promise<void> => {
    const url = roleServerUrl(role);
    const origin = keyOrigin(url);
    if (origin === null) {
      void vscode.window.showInformationMessage(`Strata: set strata.${ROLE_URL_SETTING[role]} first: a key is kept for the server it is entered for.`);
      return;
    }
    const key = await vscode.window.showInputBox({
      title: `API key for ${ROLE_FEATURE[role]}`,
      prompt: `Sent only to ${origin}; a changed strata.${ROLE_URL_SETTING[role]} asks again. Stored in VS Code's secret storage. Leave empty to remove it.`,
      password: true, ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key) await storeBoundKey(context.secrets, roleKeySecret(role), key, url);
    else await context.secrets.delete(roleKeySecret(role));
    roles.reload([role]);
  };

  /** A role's URL changed: its key (entered for another server) stays behind; ask for the new server's. */
  const askAgain = async (role: ModelUse): Promise<void> => {
    const was = await storedKeyOrigin(context.secrets, roleKeySecret(role));
    const now = keyOrigin(roleServerUrl(role));
    if (was === null || now === null || was === now) return;
    const pick = await vscode.window.showInformationMessage(
      `Strata: the API key for ${ROLE_FEATURE[role]} was entered for ${was}, so it is not sent to ${now}. Enter the key for ${now}?`, 'Set Key');
    if (pick) await askKey(role);
  };

  context.subscriptions.push(
    { dispose: () => roles.dispose() },
    vscode.commands.registerCommand('strata.setRoleApiKey', async () => {
      const items: RoleItem[] = ROLES.map((role) => ({
        role, label: ROLE_FEATURE[role], description: roleServerUrl(role) || `no server of its own (strata.${ROLE_URL_SETTING[role]})`,
      }));
      const pick = await vscode.window.showQuickPick(items, { title: 'Strata: Set Role Server API Key', placeHolder: 'The key of which role\'s server?' });
      if (pick) await askKey(pick.role);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('strata')) return;
      const before = served;
      served = servedFiles();
      // Allowing plain http changes whether a role's key may go: every role server connects again.
      const insecure = e.affectsConfiguration('strata.allowInsecureRemote');
      const changed = ROLES.filter((r) => insecure || e.affectsConfiguration(`strata.${ROLE_URL_SETTING[r]}`) || e.affectsConfiguration(`strata.${ROLE_MODEL_SETTING[r]}`));
      if (!changed.length) return;
      roles.reload(changed);
      for (const r of changed) if (e.affectsConfiguration(`strata.${ROLE_URL_SETTING[r]}`)) void askAgain(r);
      // A role URL alone reconnects that role; the managed server restarts only if its models change
      // (a model setting's change asks through the server settings' own handler).
      const urlOnly = !ROLES.some((r) => e.affectsConfiguration(`strata.${ROLE_MODEL_SETTING[r]}`));
      if (!urlOnly || before === served) return;
      const action = settingsChangeAction(server.status.state, false);
      if (action === 'apply') void server.restart().catch(() => undefined);
      else if (action === 'ask') {
        void vscode.window.showInformationMessage('Strata: a role moved to or from its own server, so the managed server serves other models. Restart it to apply?', 'Restart')
          .then((b) => b && server.restart().catch(() => undefined));
      }
    }),
  );
}
