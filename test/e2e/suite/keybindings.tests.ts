// Extension-host test: the keys Strata contributes take nothing VS Code binds by default, except
// Shift+Tab, which Strata takes only while ghost text shows (VS Code's default outdents), and Tab
// and Esc, which Strata takes only while its own next-edit proposal shows as an inline diff (and
// no ghost text, suggest widget or snippet wants them).
import * as vscode from 'vscode';
import { assert, type ExtHostTest } from './runner.js';

interface Binding { key: string; command: string; when?: string }

/** VS Code's default keybindings (its "Open Default Keyboard Shortcuts (JSON)" document), comments dropped. */
async function defaultKeybindings(): Promise<Binding[]> {
  await vscode.commands.executeCommand('workbench.action.openDefaultKeybindingsFile');
  const doc = vscode.window.activeTextEditor?.document;
  assert(doc, 'the default keybindings document did not open');
  const text = doc.getText().replace(/^\s*\/\/.*$/gm, '');
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  return JSON.parse(text) as Binding[];
}

export const keybindingTests: ExtHostTest[] = [
  {
    name: 'Strata\'s keybindings take no key VS Code binds by default (Shift+Tab only while ghost text shows, Tab and Esc only while a next edit shows)',
    timeoutMs: 60_000,
    fn: async () => {
      const ext = vscode.extensions.getExtension('strata.strata-vscode');
      assert(ext, 'Strata is not installed');
      const ours = (ext.packageJSON as { contributes: { keybindings: Binding[] } }).contributes.keybindings;
      const all = await defaultKeybindings();
      const others = all.filter((b) => !b.command.startsWith('strata.') && !b.command.startsWith('-') && !ours.some((o) => o.command === b.command && o.key === b.key));
      const clashes: string[] = [];
      for (const b of ours) {
        const taken = others.filter((o) => o.key === b.key);
        if (b.key === 'shift+tab') {
          assert(/inlineSuggestionVisible/.test(b.when ?? '') && /!suggestWidgetVisible/.test(b.when ?? '') && /!inSnippetMode/.test(b.when ?? ''),
            `Shift+Tab is bound without the ghost-text condition: ${b.when}`);
          continue;
        }
        if (b.key === 'tab' || b.key === 'escape') {
          const when = b.when ?? '';
          for (const guard of ['strata.nextEditVisible', 'editorTextFocus', '!inlineSuggestionVisible', '!suggestWidgetVisible', '!inSnippetMode']) {
            assert(when.split('&&').map((w) => w.trim()).includes(guard), `${b.key} is bound to ${b.command} without "${guard}": ${when}`);
          }
          continue;
        }
        for (const o of taken) clashes.push(`${b.key}: ${b.command} vs VS Code's ${o.command}${o.when ? ` (${o.when})` : ''}`);
      }
      assert(ours.length >= 4, `only ${ours.length} keybindings contributed`);
      assert(clashes.length === 0, `keys already bound: ${clashes.join('; ')}`);
      console.log(`[keys] ${ours.map((b) => `${b.key} -> ${b.command}`).join(', ')}; checked against ${all.length} defaults`);
    },
  },
];
