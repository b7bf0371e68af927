// run_command in an integrated terminal with shell integration: the command goes in through
// shellIntegration.executeCommand, its output is read from the execution's stream, its exit code
// from the end event. Stop sends Ctrl+C and ends the wait at once. A terminal without shell
// integration (a shell VS Code cannot inject into) falls back to a child process, with a note.
import * as vscode from 'vscode';
import { CappedOutput, runChildCommand } from './child-command.js';
import type { CommandResult } from './types.js';

/** How long a new terminal may take to report shell integration before the child-process fallback. */
const SHELL_INTEGRATION_WAIT_MS = 6000;

// CSI, OSC (to BEL or ST) and the remaining two-character escapes.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
export const stripAnsi = (s: string): string => s.replace(ANSI, '').replace(/\r\n/g, '\n').replace(/\r/g, '');

export class AgentTerminal implements vscode.Disposable {
  private terminal: vscode.Terminal | undefined;
  private cwd: string | undefined;
  private readonly subs: vscode.Disposable[] = [];

  constructor() {
    this.subs.push(vscode.window.onDidCloseTerminal((t) => { if (t === this.terminal) this.terminal = undefined; }));
  }

  async run(command: string, cwd: string, signal: AbortSignal): Promise<CommandResult> {
    const term = this.terminalFor(cwd);
    term.show(true);
    const si = term.shellIntegration ?? await waitForShellIntegration(term, signal);
    signal.throwIfAborted();
    if (!si) return runChildCommand(command, cwd, signal, 'the terminal has no shell integration, so it ran in a child process, not in the terminal');
    const exec = si.executeCommand(command);
    const out = new CappedOutput();
    const ended = new Promise<number | undefined>((resolve) => {
      const sub = vscode.window.onDidEndTerminalShellExecution((e) => {
        if (e.execution !== exec) return;
        sub.dispose();
        resolve(e.exitCode);
      });
      this.subs.push(sub);
    });
    const reading = (async () => { for await (const data of exec.read()) out.push(data); })();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => { term.sendText('\u0003', false); reject(signal.reason); };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const [code] = await Promise.race([Promise.all([ended, reading]), aborted]);
      return { output: stripAnsi(out.text()), exitCode: code ?? null, note: code === undefined ? 'the shell did not report the exit code' : null };
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      aborted.catch(() => undefined);
    }
  }

  private terminalFor(cwd: string): vscode.Terminal {
    if (this.terminal && this.cwd === cwd && this.terminal.exitStatus === undefined) return this.terminal;
    this.terminal?.dispose();
    this.cwd = cwd;
    this.terminal = vscode.window.createTerminal({ name: 'Strata Agent', cwd, iconPath: new vscode.ThemeIcon('hubot') });
    return this.terminal;
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.terminal?.dispose();
  }
}

function waitForShellIntegration(term: vscode.Terminal, signal: AbortSignal): Promise<vscode.TerminalShellIntegration | undefined> {
  return new Promise((resolve) => {
    const done = (si: vscode.TerminalShellIntegration | undefined): void => {
      sub.dispose();
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(si);
    };
    const sub = vscode.window.onDidChangeTerminalShellIntegration((e) => { if (e.terminal === term) done(e.shellIntegration); });
    const timer = setTimeout(() => done(term.shellIntegration), SHELL_INTEGRATION_WAIT_MS);
    const onAbort = (): void => done(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
