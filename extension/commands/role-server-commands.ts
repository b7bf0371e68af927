// Strata: Set Role Server API Key, and reconnecting a role's own server when its settings change.
import * as vscode from 'vscode';
import { readServerSettings, ROLE_MODEL_SETTING, ROLE_URL_SETTING, roleKeySecret, roleServerUrl } from '../config/config.js';
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
  context.subscriptions.push(
    { dispose: () => roles.dispose() },
    vscode.commands.registerCommand('strata.setRoleApiKey', async () => {
      const items: RoleItem[] = ROLES.map((role) => ({
        role, label: ROLE_FEATURE[role], description: roleServerUrl(role) || `no server of its own (strata.${ROLE_URL_SETTING[role]})`,
      }));
      const pick = await vscode.window.showQuickPick(items, { title: 'Strata: Set Role Server API Key', placeHolder: 'The key of which role\'s server?' });
      if (!pick) return;
      const key = await vscode.window.showInputBox({
        title: `API key for ${pick.label}`,
        prompt: `Sent only to ${roleServerUrl(pick.role) || `the server in strata.${ROLE_URL_SETTING[pick.role]}`}. Stored in VS Code's secret storage. Leave empty to remove it.`,
        password: true, ignoreFocusOut: true,
      });
      if (key === undefined) return;
      if (key) await context.secrets.store(roleKeySecret(pick.role), key);
      else await context.secrets.delete(roleKeySecret(pick.role));
      roles.reload([pick.role]);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('strata')) return;
      const before = served;
      served = servedFiles();
      const changed = ROLES.filter((r) => e.affectsConfiguration(`strata.${ROLE_URL_SETTING[r]}`) || e.affectsConfiguration(`strata.${ROLE_MODEL_SETTING[r]}`));
      if (!changed.length) return;
      roles.reload(changed);
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
