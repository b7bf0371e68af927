// Strata: Set Role Server API Key, and reconnecting a role's own server when its settings change.
import * as vscode from 'vscode';
import { ROLE_MODEL_SETTING, ROLE_URL_SETTING, roleKeySecret, roleServerUrl } from '../config/config.js';
import type { ModelUse } from '../config/server-settings.js';
import { ROLE_FEATURE } from '../server/capabilities.js';
import { ROLES, type RoleServers } from '../server/roleServers.js';

type RoleItem = vscode.QuickPickItem & { role: ModelUse };

export function registerRoleServerCommands(context: vscode.ExtensionContext, roles: RoleServers): void {
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
      const changed = ROLES.filter((r) => e.affectsConfiguration(`strata.${ROLE_URL_SETTING[r]}`) || e.affectsConfiguration(`strata.${ROLE_MODEL_SETTING[r]}`));
      if (changed.length) roles.reload(changed);
    }),
  );
}
