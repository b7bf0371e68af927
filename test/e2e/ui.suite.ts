// The product UI suite: the Strata VSIX installed in a real VS Code, its managed server on the tiny
// test model. Each step saves test-output/e2e/<nn-step>.png. Steps that need an earlier step's
// outcome are skipped (and counted) when it failed, so one missing feature shows up once, by name.
// The steps of each area live in ui-*.suite.ts; this file runs them in order (later steps stop and
// crash the server, so they come last).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from './lib/playwright.js';
import { panelFrame, STRATA_EXTENSION_ID } from './lib/panel.js';
import type { StepRunner } from './lib/steps.js';
import type { Workbench } from './lib/workbench.js';
import { chatSteps } from './ui-chat.suite.js';
import { completionSteps } from './ui-completion.suite.js';
import { indexSteps } from './ui-index.suite.js';
import { nextEditSteps } from './ui-next-edit.suite.js';
import { AGENT_FILE, agentSteps } from './ui-agent.suite.js';
import { modelsSteps } from './ui-models.suite.js';
import { imageSteps } from './ui-images.suite.js';
import { serverSteps, startupSteps } from './ui-server.suite.js';

export { STRATA_EXTENSION_ID };

/** User settings for the run: the test model, auto-start, and a small server (2 cores). */
export function STRATA_SETTINGS_FOR(modelPath: string, index?: { embeddingModel: string; rerankModel: string }, projector?: string, agentsBin?: string): Record<string, unknown> {
  return {
    'strata.modelPath': modelPath,
    // The chat model's projector (ui-images.suite.ts): images pasted into the panel.
    ...(projector ? { 'strata.chatModelProjector': projector } : {}),
    // The codebase index's models (ui-index.suite.ts): vectors and reranking beside full text.
    ...(index ? { 'strata.embeddingModel': index.embeddingModel, 'strata.rerankModel': index.rerankModel } : {}),
    'strata.serverMode': 'managed',
    'strata.autoStart': true,
    'strata.slots': 2,
    'strata.contextSize': 512,
    'strata.parkMiB': 64,
    // The fit to memory also on the CPU, so the Devices tab shows its plan on this GPU-less machine.
    'strata.fit': 'on',
    'strata.inlineCompletion.enabled': true,
    'strata.inlineCompletion.debounceMs': 50,
    'strata.inlineCompletion.maxLines': 2,
    // The word-based suggest widget pops up while typing, and VS Code then cancels a pending
    // inline completion (measured: any provider slower than ~0.7 s loses its ghost text). The
    // test is about ghost text, so keep the widget away.
    'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
    'editor.wordBasedSuggestions': 'off',
    'editor.suggestOnTriggerCharacters': false,
    // The terminal draws with the DOM renderer, so a step can read what a coding agent shows.
    'terminal.integrated.gpuAcceleration': 'off',
    // The coding agents this checkout pins (ui-server.suite.ts runs one), on the terminals' PATH as
    // a user's global install would be.
    ...(agentsBin ? { 'terminal.integrated.env.linux': { PATH: `${agentsBin}:\${env:PATH}` } } : {}),
  };
}

/** What the step files share: the runner, the workbench, the workspace folder, the panel. */
export interface UiContext {
  t: StepRunner;
  wb: Workbench;
  workspace: string;
  /** Changes user settings (the only place the server mode and its URL are read from). */
  userSettings(patch: Record<string, unknown>): void;
  /** The editor-area Strata panel (opened or revealed when needed); a fresh frame each time it was hidden. */
  panel(): Promise<Frame>;
}

export const STEP = {
  ready: 'status bar reaches ready',
  panel: 'panel opens ("Strata: Open Panel")',
  chat: 'Chat tab streams an answer; the chat\'s Stop is the only Stop in sight',
};

/** The files the steps open, made before the workbench indexes the folder (Quick Open finds them at once). */
const FILES = ['e2e_sample.py', 'e2e_partial.py', 'e2e_paused.py', 'e2e_insert.py', 'e2e_ctx.py', 'e2e_big.py', 'e2e_edit.py', 'e2e_rename.py', 'e2e_ghost.py', 'e2e_candidates.py', AGENT_FILE];

/** The areas in run order; STRATA_E2E_AREAS=next-edit,... runs only those (while working on one). */
const AREAS = ['startup', 'models', 'chat', 'images', 'completion', 'index', 'server', 'next-edit', 'agent'] as const;

export function prepareWorkspace(workspace: string): void {
  for (const f of FILES) if (!existsSync(join(workspace, f))) writeFileSync(join(workspace, f), '\n');
}

export async function uiSuite(t: StepRunner, wb: Workbench, workspace: string, userSettings: (patch: Record<string, unknown>) => void): Promise<void> {
  const ctx: UiContext = {
    t, wb, workspace, userSettings,
    panel: async () => {
      const open = await panelFrame(wb, 'editor', 1000).catch(() => undefined);
      if (open) return open;
      await wb.runCommand('Strata: Open Panel');
      return panelFrame(wb, 'editor', 30_000);
    },
  };
  const only = process.env.STRATA_E2E_AREAS?.split(',').map((a) => a.trim()).filter(Boolean);
  const unknown = only?.filter((a) => !(AREAS as readonly string[]).includes(a)) ?? [];
  if (unknown.length) throw new Error(`STRATA_E2E_AREAS names no area ${unknown.join(', ')} (areas: ${AREAS.join(', ')})`);
  const steps: Record<(typeof AREAS)[number], (c: UiContext) => Promise<void>> = {
    startup: startupSteps, models: modelsSteps, chat: chatSteps, images: imageSteps, completion: completionSteps, index: indexSteps, server: serverSteps,
    // Last: it switches the extension to a scripted server in remote mode.
    'next-edit': nextEditSteps,
    // After next-edit: it switches to its own scripted server (the model's turns of an agent run).
    agent: agentSteps,
  };
  for (const area of AREAS) if (!only || only.includes(area)) await steps[area](ctx);
}
