// Agent mode's pieces above the message box: the rule files the agent follows (a chip each, with
// its token count), the plan the model keeps (pinned while it runs, each item's state), and the
// Restore to here confirmation (the files, their diffs, conflicts, the commands it cannot undo).
import type { RuleFileView, TodoItem } from '../../contract/agent-plan.js';
import type { RestorePlanView } from '../../contract/agent-checkpoints.js';
import { diffEl } from './agent-steps.js';
import { h } from '../dom.js';
import { icon, labelledIconButton } from '../icons.js';

function ruleTitle(r: RuleFileView): string {
  const scope = r.scope ? `files under ${r.scope}/` : 'the whole workspace';
  return `${r.path}: rules for ${scope}, in the agent's system message (${r.estimated ? '≈' : ''}${r.tokens} tokens${r.cut ? ', cut to the rules budget' : ''})`;
}

export function rulesChips(rules: readonly RuleFileView[]): HTMLElement | null {
  if (!rules.length) return null;
  return h('div', { class: 'ctx-chips agent-rules', role: 'list', 'aria-label': 'Rules the agent follows' },
    ...rules.map((r) => h('span', { class: 'ctx-chip rule-chip', role: 'listitem', title: ruleTitle(r), 'aria-label': ruleTitle(r) },
      icon('law'), h('span', { class: 'ctx-name' }, r.path), h('span', { class: 'muted' }, `${r.estimated ? '≈' : ''}${r.tokens} tok`))));
}

const TODO_ICON: Record<TodoItem['state'], string> = { pending: 'circle-large-outline', in_progress: 'loading', done: 'pass' };
const TODO_WORD: Record<TodoItem['state'], string> = { pending: 'pending', in_progress: 'in progress', done: 'done' };

export function todoEl(items: readonly TodoItem[]): HTMLElement {
  const done = items.filter((i) => i.state === 'done').length;
  return h('div', { class: 'agent-todo', role: 'region', 'aria-label': 'Agent plan' },
    h('div', { class: 'todo-head muted' }, `Plan · ${done} of ${items.length} done`),
    h('ol', { class: 'todo-items' }, ...items.map((i) => h('li', { class: `todo-item ${i.state}`, 'data-state': i.state, 'aria-label': `${i.text}: ${TODO_WORD[i.state]}` },
      icon(TODO_ICON[i.state]), h('span', { class: 'todo-text' }, i.text)))));
}

const ACTION: Record<RestorePlanView['files'][number]['action'], string> = { write: 'back to its content then', delete: 'deleted (the agent created it)', recreate: 'recreated (it was deleted since)' };

export function restorePlanEl(plan: RestorePlanView, confirm: () => void, cancel: () => void): HTMLElement {
  const restorable = plan.files.filter((f) => !f.conflict).length;
  return h('div', { class: 'restore-plan', role: 'dialog', 'aria-label': 'Restore to here' },
    h('div', { class: 'restore-head' }, icon('history'), h('strong', {}, 'Restore to here')),
    h('p', {}, plan.files.length
      ? `The files the agent changed after this step go back to their content at this point, and the conversation is cut here so you can ask again.`
      : 'No file changed after this step; the conversation is cut here so you can ask again.'),
    plan.files.length ? h('ul', { class: 'restore-files', 'aria-label': 'Files to restore' }, ...plan.files.map((f) => h('li', { class: f.conflict ? 'conflict' : '' },
      h('span', { class: 'restore-path' }, f.path), ' ', h('span', { class: 'muted' }, ACTION[f.action]),
      f.conflict ? h('span', { class: 'error' }, ' · conflict: changed since the agent changed it; it is left as it is') : null,
      h('details', { class: 'restore-diff' }, h('summary', { class: 'muted' }, 'Diff'), diffEl(f.diff))))) : null,
    h('p', { class: 'warn' }, plan.commands.length
      ? `${plan.commands.length} command${plan.commands.length === 1 ? '' : 's'} ran after this point: ${plan.commands.map((c) => `\`${c}\``).join(', ')}. What a command did cannot be undone.`
      : 'What commands did cannot be undone (none ran after this point).'),
    h('div', { class: 'row step-ask' },
      labelledIconButton('history', restorable ? `Restore ${restorable} file${restorable === 1 ? '' : 's'}` : 'Cut the conversation here', confirm, { class: 'primary', 'aria-label': 'Confirm Restore to here' }),
      labelledIconButton('close', 'Cancel', cancel, { 'aria-label': 'Cancel Restore to here' })));
}
