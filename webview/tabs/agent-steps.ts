// An agent answer's tool steps in the conversation: the tool and its main argument, its status,
// the arguments and result collapsed, a proposed change as a diff with Accept / Reject / Accept all
// (and Open Diff for VS Code's diff editor), a command with Run / Skip, a tool with Allow / Deny.
import type { AgentDecision, AgentStepView } from '../../contract/agent.js';
import { visibleText } from '../../contract/visible-text.js';
import { argsSummary } from '../agent-turns.js';
import { button, h } from '../dom.js';
import { icon, labelledIconButton } from '../icons.js';

export interface StepActions {
  decide(stepId: string, decision: AgentDecision): void;
  showDiff(stepId: string): void;
  /** Restore to here (a checkpoint step: an applied change, a command that ran). */
  restore?(stepId: string): void;
}

const STATUS: Record<AgentStepView['status'], string> = {
  running: 'running…', waiting: 'waiting for you', done: 'done', error: 'error', rejected: 'rejected', skipped: 'skipped', cancelled: 'stopped',
};
const TOOL_ICON: Record<string, string> = {
  read_file: 'file', list_files: 'list-tree', search_text: 'search', get_diagnostics: 'warning', search_codebase: 'database',
  edit_file: 'edit', create_file: 'new-file', run_command: 'terminal', todo: 'checklist',
};

/** A unified diff with its lines marked added / removed / hunk header (colours in panel.css). */
export function diffEl(diff: string): HTMLElement {
  const pre = h('pre', { class: 'agent-diff', 'aria-label': 'Proposed change' });
  for (const line of diff.split('\n')) {
    const kind = line.startsWith('+++') || line.startsWith('---') ? 'file' : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
    pre.append(h('span', { class: `dl ${kind}` }, `${line}\n`));
  }
  return pre;
}

export function stepEl(step: AgentStepView, actions: StepActions, pendingChanges: number): HTMLElement {
  const decide = (d: AgentDecision) => () => actions.decide(step.id, d);
  const head = h('div', { class: 'step-head' },
    icon(TOOL_ICON[step.tool] ?? 'tools'),
    h('span', { class: 'step-tool' }, step.tool),
    h('span', { class: 'step-arg muted' }, visibleText(argsSummary(step.args))),
    h('span', { class: `step-status ${step.status}` }, step.proposal && step.proposal.decision !== 'pending' && step.proposal.decision !== 'part' ? step.proposal.decision : STATUS[step.status]));
  const parts: Array<HTMLElement | null> = [head];
  const p = step.proposal;
  if (p && p.decision !== 'part') {
    parts.push(h('div', { class: 'step-file' }, `${p.created ? 'New file' : 'Change to'} ${p.path}`), diffEl(p.diff));
  } else if (p) {
    parts.push(h('div', { class: 'muted' }, `part of the change to ${p.path} above`));
  }
  if (step.command) {
    // The whole command as it will run: hidden and bidi characters escaped, blank runs counted.
    parts.push(h('pre', { class: 'step-command', 'aria-label': 'Command' }, `$ ${visibleText(step.command.text)}`),
      h('div', { class: 'muted' }, `in ${step.command.cwd}${step.command.allowListed ? ' · allow-listed (strata.agent.allowedCommands)' : ''}`));
  }
  if (step.ask === 'change') {
    parts.push(h('div', { class: 'row step-ask', role: 'group', 'aria-label': `Review the change to ${p?.path ?? 'the file'}` },
      labelledIconButton('check', 'Accept', decide('allow'), { class: 'primary', 'aria-label': `Accept the change to ${p?.path}` }),
      labelledIconButton('close', 'Reject', decide('deny'), { 'aria-label': `Reject the change to ${p?.path}` }),
      pendingChanges > 1 ? labelledIconButton('check-all', `Accept all (${pendingChanges})`, decide('acceptAll'), { 'aria-label': 'Accept all proposed changes' }) : null,
      labelledIconButton('diff', 'Open Diff', () => actions.showDiff(step.id), { 'aria-label': `Open the change to ${p?.path} in a diff editor` })));
  } else if (step.ask === 'command') {
    parts.push(h('div', { class: 'row step-ask', role: 'group', 'aria-label': 'Confirm the command' },
      labelledIconButton('play', 'Run', decide('allow'), { class: 'primary', 'aria-label': 'Run the command' }),
      labelledIconButton('debug-step-over', 'Skip', decide('deny'), { 'aria-label': 'Skip the command' })));
  } else if (step.ask === 'tool') {
    parts.push(h('div', { class: 'row step-ask', role: 'group', 'aria-label': `Allow ${step.tool}` },
      button('Allow', decide('allow'), { class: 'primary', 'aria-label': `Allow ${step.tool}` }),
      button('Deny', decide('deny'), { 'aria-label': `Deny ${step.tool}` })));
  }
  if (step.checkpoint && actions.restore && step.ask === null) {
    parts.push(h('div', { class: 'row step-restore' }, labelledIconButton('history', 'Restore to here', () => actions.restore!(step.id), { 'aria-label': `Restore to here: the files as they were after this ${step.tool} step` })));
  }
  parts.push(h('details', { class: 'step-args' }, h('summary', { class: 'muted' }, 'Arguments'), h('pre', {}, visibleText(prettyArgs(step.args)))));
  if (step.result !== null) {
    parts.push(h('details', { class: 'step-result' }, h('summary', { class: 'muted' }, 'Result'), h('pre', {}, step.result)));
  }
  return h('div', { class: `agent-step ${step.status}`, role: 'group', 'aria-label': `Tool ${step.tool}: ${STATUS[step.status]}`, 'data-step': step.id }, ...parts);
}

function prettyArgs(args: string): string {
  try { return JSON.stringify(JSON.parse(args), null, 2); } catch { return args; }
}
