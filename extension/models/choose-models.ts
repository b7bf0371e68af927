// "Strata: Choose Models": a role (chat, completion, embeddings, reranker), a model for it from
// the catalogue (or any Hub repository), then one of its files with its size and whether it fits
// this machine; the file is pulled into the same models folder `strata pull` uses (progress in a
// notification, cancellable, resumed on the next try) and set as the role's model.
import { freemem } from 'node:os';
import * as vscode from 'vscode';
import type { DeviceMemory } from '../../contract/devices.js';
import { parseHubRef, hubAccess, type HubRef } from '../../common/hub/hub-ref.js';
import { listRepoFiles } from '../../common/hub/repo-files.js';
import { ROLE_URL_SETTING, roleServerUrl, setServerSetting, setting } from '../config/config.js';
import type { ServerControl } from '../server/connection.js';
import { pullWithProgress, PullCancelled } from '../server/hub-pull.js';
import { CATALOGUE, ROLE_SETTING, ROLE_TITLE, type CatalogueRole } from './catalogue.js';
import { fileRows, machineMemory } from './model-fit.js';

type RoleItem = vscode.QuickPickItem & { role: CatalogueRole };
type RepoItem = vscode.QuickPickItem & { repo: string | null; quant: string | null };
type FileItem = vscode.QuickPickItem & { path: string };

export function registerChooseModels(context: vscode.ExtensionContext, server: ServerControl, log: vscode.LogOutputChannel): void {
  context.subscriptions.push(vscode.commands.registerCommand('strata.chooseModels', async () => {
    try {
      await chooseModel(server, log);
    } catch (err) {
      void vscode.window.showErrorMessage(`Strata: ${(err as Error).message}`);
    }
  }));
}

async function chooseModel(server: ServerControl, log: vscode.LogOutputChannel): Promise<void> {
  const roles: RoleItem[] = (Object.keys(ROLE_TITLE) as CatalogueRole[]).map((role) => ({
    role, label: ROLE_TITLE[role], description: setting(ROLE_SETTING[role]) || 'not set',
    // A role on its own server runs that server's model: a file picked here waits until the role comes back.
    ...(roleServerUrl(role) ? { detail: `on ${roleServerUrl(role)} (strata.${ROLE_URL_SETTING[role]})` } : {}),
  }));
  // Every step stays open when focus moves (a view or notification coming up must not end the
  // flow half-way unseen); Escape still closes it.
  const role = await vscode.window.showQuickPick(roles, { title: 'Strata: Choose Models (1/3)', placeHolder: 'Which role is the model for?', ignoreFocusOut: true });
  if (!role) return;

  const repos: RepoItem[] = [
    ...CATALOGUE.filter((e) => e.role === role.role).map((e) => ({ label: e.label, description: e.repo, detail: e.detail, repo: e.repo, quant: e.quant })),
    { label: '$(search) Another Hub model…', detail: 'ORG/REPO from huggingface.co (or HF_ENDPOINT)', repo: null, quant: null },
  ];
  const repoPick = await vscode.window.showQuickPick(repos, { title: `Strata: Choose Models (2/3): ${role.label}`, placeHolder: 'A model for this role', ignoreFocusOut: true });
  if (!repoPick) return;
  let ref: HubRef;
  if (repoPick.repo !== null) ref = { repo: repoPick.repo, quant: repoPick.quant, file: null };
  else {
    const typed = await vscode.window.showInputBox({
      title: 'A Hub model', prompt: 'ORG/REPO, ORG/REPO:QUANT or ORG/REPO/FILE.gguf', ignoreFocusOut: true,
      validateInput: (v) => { try { parseHubRef(v.trim()); return null; } catch (e) { return (e as Error).message; } },
    });
    if (!typed) return;
    ref = parseHubRef(typed.trim());
  }

  const file = ref.file ?? await pickFile(ref, server);
  if (!file) return;
  const path = await pull({ repo: ref.repo, quant: null, file }, log);
  if (!path) return;
  await setServerSetting(ROLE_SETTING[role.role], path);
  log.info(`${role.label}: ${path}`);
  if (server.status.state !== 'stopped') await server.restart().catch(() => undefined);
  else void vscode.window.showInformationMessage(`Strata will use ${file} for ${role.label.toLowerCase()}.`, 'Start Server')
    .then((b) => b && server.start().catch(() => undefined));
}

/** The repository's files with size and fit, the catalogue's quantisation first. */
async function pickFile(ref: HubRef, server: ServerControl): Promise<string | undefined> {
  const files = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Strata: listing ${ref.repo}`, cancellable: true },
    (_p, token) => {
      const ac = new AbortController();
      token.onCancellationRequested(() => ac.abort());
      return listRepoFiles(hubAccess(), ref.repo, ac.signal);
    },
  );
  const devices: DeviceMemory[] = await server.client?.devices().catch(() => []) ?? [];
  const mem = machineMemory(freemem(), devices);
  // The speed the server measured says how fast a file runs on this CPU, not on a GPU.
  const speed = mem.gpus.length === 0 ? await server.client?.decodeSpeed().catch(() => null) ?? null : null;
  const rows = fileRows(files, ref.quant, mem, speed);
  if (rows.length === 0) throw new Error(`${ref.repo} has no GGUF model file`);
  const items: FileItem[] = rows.map((r) => ({
    label: `${r.fits ? '$(pass)' : '$(warning)'} ${r.path}`, description: r.description, detail: r.detail, path: r.path,
  }));
  const gpuNote = mem.gpus.length > 0 ? ''
    : server.client ? ' (the server reports no GPU: RAM only)' : ' (GPU memory is read from the running server: start it to see what fits a GPU)';
  // It opens after the listing and the server's answers: focus may have moved meanwhile.
  const pick = await vscode.window.showQuickPick(items, {
    title: `Strata: Choose Models (3/3): ${ref.repo}`, placeHolder: `Which file? Fit to this machine${gpuNote}`, matchOnDetail: true, ignoreFocusOut: true,
  });
  return pick?.path;
}

/** Pulls with progress; a stopped download is said, not an error (the same choice resumes it). */
async function pull(ref: HubRef, log: vscode.LogOutputChannel): Promise<string | undefined> {
  try {
    return await pullWithProgress(ref, log);
  } catch (err) {
    if (!(err instanceof PullCancelled)) throw err;
    void vscode.window.showInformationMessage('Strata: download stopped. Choose the same file again to resume it.');
    return undefined;
  }
}
