// Chat tab: streaming chat with the local model, answers rendered as markdown (code blocks with
// Copy / Insert / Apply), editor context attached as chips with the prompt's token count shown
// before sending, copy / regenerate / edit on the turns, named and saved as sessions.
import { isThinkingLevel, THINKING_LEVELS, type ContextItem, type FromWebview, type ThinkingLevel } from '../../contract/panel.js';
import type { ImageAttachment } from '../../contract/chat.js';
import { sessionNameAdvice } from '../../contract/session-name.js';
import {
  addImage, canRegenerate, conversation, editLastQuestion, estimateRequest, isStreaming, newChat, regenerate, removeContext, removeImage, sendChat, setMode, setThinking, thinkingView,
  type ChatTurn, type ViewState,
} from '../state.js';
import type { ChatMode } from '../../contract/agent.js';
import { stepEl, type StepActions } from './agent-steps.js';
import { restorePlanEl, rulesChips, todoEl } from './agent-work.js';
import { cancelRestore } from '../agent-work.js';
import { compactionEl, contextMeterEl } from './agent-context.js';
import { latestContext } from '../agent-compaction.js';
import { button, h } from '../dom.js';
import { icon, iconButton } from '../icons.js';
import { renderMarkdown, type CodeActions } from '../markdown/render.js';

export interface ChatHost {
  state(): ViewState;
  update(s: ViewState): void;
  post(m: FromWebview): void;
}

const ESTIMATE_DELAY_MS = 350;

/** What the estimate depends on: the draft, its context and images (their counts), the conversation. */
function estimateKey(s: ViewState): string {
  return `${s.draft}\u0000${s.draftContext.map((c) => c.id).join(',')}\u0000${(s.draftImages ?? []).map((i) => `${i.id}:${i.tokens}`).join(',')}\u0000${s.turns.length}`;
}

function chipLabel(c: ContextItem): string {
  const where = c.range ? (c.range.startLine === c.range.endLine ? `:${c.range.startLine}` : `:${c.range.startLine}-${c.range.endLine}`) : '';
  return `${c.path.split('/').pop()}${where}`;
}

function chipTitle(c: ContextItem): string {
  return `${c.kind === 'selection' ? 'Selection from' : c.kind === 'codebase' ? 'From the codebase index:' : 'File'} ${c.path}${c.tokens !== null ? `, ${c.tokens} tokens` : ''}${c.cutFrom ? ` (first ${c.text.split('\n').length} of ${c.cutFrom} lines)` : ''}`;
}

function chip(c: ContextItem, onRemove: (() => void) | null): HTMLElement {
  return h('span', { class: 'ctx-chip', title: chipTitle(c), role: 'listitem', 'aria-label': `${chipTitle(c)}` },
    icon(c.kind === 'selection' ? 'list-selection' : c.kind === 'codebase' ? 'database' : 'file'),
    h('span', { class: 'ctx-name' }, chipLabel(c)),
    c.tokens !== null ? h('span', { class: 'muted' }, `${c.tokens} tok`) : null,
    onRemove ? iconButton('close', `Remove ${c.path} from the message`, onRemove, { class: 'chip-x' }) : null);
}

function sizeText(bytes: number): string {
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/** An image's chip: a thumbnail, its name, its size and the tokens it takes (counting… until the server said). */
function imageChip(i: ImageAttachment, onRemove: (() => void) | null): HTMLElement {
  const tokens = i.tokens !== null ? `${i.tokens} tok` : onRemove ? 'counting…' : '';
  const title = `Image ${i.name}, ${sizeText(i.bytes)}${i.tokens !== null ? `, ${i.tokens} tokens` : ''}`;
  return h('span', { class: 'ctx-chip image-chip', title, role: 'listitem', 'aria-label': title },
    h('img', { class: 'image-thumb', src: i.dataUrl, alt: '' }),
    h('span', { class: 'ctx-name' }, i.name),
    h('span', { class: 'muted' }, sizeText(i.bytes)),
    tokens ? h('span', { class: 'muted' }, tokens) : null,
    onRemove ? iconButton('close', `Remove the image ${i.name} from the message`, onRemove, { class: 'chip-x' }) : null);
}

/** A pasted or dropped file as an attachment (its bytes as a data URL). */
function readImage(file: File, id: string): Promise<ImageAttachment> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({ id, name: file.name || 'pasted image', dataUrl: String(reader.result), bytes: file.size, tokens: null });
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
}

export class ChatTab {
  readonly el: HTMLElement;
  private readonly log: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly name: HTMLInputElement;
  private readonly send: HTMLButtonElement;
  private readonly stop: HTMLButtonElement;
  private readonly save: HTMLButtonElement;
  private readonly chips: HTMLElement;
  /** Agent mode: the rules chips, the pinned plan, the Restore to here confirmation. */
  private readonly agentWork: HTMLElement;
  private agentWorkShown: unknown[] = [];
  private readonly cost: HTMLElement;
  private readonly meter: HTMLElement;
  private readonly addMenu: HTMLElement;
  private rendered: Array<{ turn: ChatTurn; el: HTMLElement; last: boolean }> = [];
  /** Thinking blocks the user opened or closed, by chatId (survives re-rendering the turn). */
  private readonly thinkingOpen = new Map<string, boolean>();
  private estimateTimer: ReturnType<typeof setTimeout> | undefined;
  private estimateSeq = 0;
  private lastEstimateKey = '';
  private readonly actions: CodeActions;
  private readonly modeButtons: Record<ChatMode, HTMLButtonElement>;
  /** This conversation's thinking: auto / off / low / high (the request's reasoning_effort). */
  private readonly thinking: HTMLSelectElement;
  private readonly stepActions: (chatId: string) => StepActions;

  constructor(private readonly host: ChatHost, private readonly newId: () => string) {
    this.actions = {
      copy: (code) => host.post({ type: 'copy', text: code }),
      insert: (code) => host.post({ type: 'insertCode', code }),
      apply: (code, language) => host.post({ type: 'applyCode', code, language }),
    };
    this.name = h('input', { type: 'text', class: 'chat-name', placeholder: 'Conversation name (to save it as a session)', 'aria-label': 'Conversation name', maxlength: 64 });
    this.name.addEventListener('input', () => host.update({ ...host.state(), chatName: this.name.value }));
    this.save = iconButton('save', 'Save as session', () => this.saveSession());
    const fresh = iconButton('add', 'New chat', () => host.update(newChat(host.state())));
    // Ask / Agent, per conversation: Agent lets the model use the workspace tools.
    const modeButton = (mode: ChatMode, label: string, tip: string): HTMLButtonElement =>
      button(label, () => host.update(setMode(host.state(), mode)), { class: 'mode', title: tip, 'aria-pressed': 'false', 'data-mode': mode });
    this.modeButtons = {
      ask: modeButton('ask', 'Ask', 'Ask: the model answers (no tools)'),
      agent: modeButton('agent', 'Agent', 'Agent: the model reads, searches and proposes changes in the workspace; you approve every change and command'),
    };
    const THINKING_LABELS: Record<ThinkingLevel, string> = { auto: 'Thinking: auto', off: 'Thinking: off', low: 'Thinking: low', high: 'Thinking: high' };
    this.thinking = h('select', {
      class: 'thinking-level', 'aria-label': 'Thinking',
      title: 'How much a reasoning model thinks in this conversation: off, low or high (its thinking budget; the server sets the budgets), or auto (the server decides)',
    }, ...THINKING_LEVELS.map((l) => h('option', { value: l }, THINKING_LABELS[l])));
    this.thinking.addEventListener('change', () => {
      if (isThinkingLevel(this.thinking.value)) host.update(setThinking(host.state(), this.thinking.value));
    });
    this.stepActions = (chatId) => ({
      decide: (stepId, decision) => host.post({ type: 'agentDecision', chatId, stepId, decision }),
      showDiff: (stepId) => host.post({ type: 'agentShowDiff', chatId, stepId }),
      restore: (stepId) => {
        if (isStreaming(host.state())) host.update({ ...host.state(), notice: { level: 'error', text: 'Stop the agent before restoring a checkpoint' } });
        else host.post({ type: 'agentRestorePreview', chatId, stepId });
      },
    });
    this.agentWork = h('div', { class: 'agent-work' });
    this.log = h('div', { class: 'chat-log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
    this.input = h('textarea', { class: 'chat-input', rows: 3, placeholder: 'Ask the local model… (Enter sends, Shift+Enter for a new line)', 'aria-label': 'Message' });
    this.input.addEventListener('input', () => {
      host.update({ ...host.state(), draft: this.input.value });
      this.scheduleEstimate();
    });
    // Images pasted or dropped into the message box go with the question (chips with size and tokens).
    this.input.addEventListener('paste', (e) => {
      const files = Array.from(e.clipboardData?.files ?? []).filter((f) => f.type.startsWith('image/'));
      if (!files.length) return;
      e.preventDefault();
      void this.attach(files);
    });
    this.input.addEventListener('dragover', (e) => { if (e.dataTransfer?.types.includes('Files')) e.preventDefault(); });
    this.input.addEventListener('drop', (e) => {
      const files = Array.from(e.dataTransfer?.files ?? []);
      if (!files.length) return;
      e.preventDefault();
      void this.attach(files);
    });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.submit();
      }
    });
    this.send = button('Send', () => this.submit(), { class: 'primary' });
    this.stop = button('Stop', () => {
      const pending = host.state().turns.find((t) => t.pending);
      if (pending?.chatId) host.post({ type: 'chatStop', chatId: pending.chatId });
    }, { title: 'Stop this answer (the server keeps running)' });
    this.chips = h('div', { class: 'ctx-chips', role: 'list', 'aria-label': 'Attached context' });
    this.cost = h('div', { class: 'chat-cost muted', role: 'status', 'aria-label': 'Prompt size' });
    this.meter = h('div', { class: 'agent-meter' });
    // Opens upwards from the message box at the bottom of the view.
    this.addMenu = h('div', { class: 'menu up', role: 'menu', 'aria-label': 'Add context', hidden: true },
      ...([['selection', 'list-selection', 'Selection'], ['file', 'file', 'Current File'], ['pick', 'search', 'File…']] as const).map(([what, ic, label]) => {
        const item = h('button', { type: 'button', role: 'menuitem' }, icon(ic), h('span', {}, label));
        item.addEventListener('click', () => {
          this.addMenu.hidden = true;
          host.post({ type: 'contextRequest', what });
        });
        return item;
      }),
      // The codebase index's best chunks for what the message box says now (also: @codebase in the message).
      ((): HTMLElement => {
        const item = h('button', { type: 'button', role: 'menuitem' }, icon('database'), h('span', {}, 'Codebase'));
        item.addEventListener('click', () => {
          this.addMenu.hidden = true;
          host.post({ type: 'codebaseRequest', query: host.state().draft });
        });
        return item;
      })());
    const add = iconButton('mention', 'Add context (selection or file)', () => { this.addMenu.hidden = !this.addMenu.hidden; }, { 'aria-haspopup': 'menu' });
    this.el = h('div', { class: 'chat' },
      h('div', { class: 'row chat-head' }, h('div', { class: 'mode-toggle', role: 'group', 'aria-label': 'Chat mode' }, this.modeButtons.ask, this.modeButtons.agent), this.name, this.save, fresh),
      this.log,
      h('div', { class: 'chat-compose' },
        this.agentWork,
        h('div', { class: 'ctx-row' }, this.chips, h('span', { class: 'menu-anchor' }, add, this.addMenu)),
        this.input,
        this.meter,
        // The thinking control sits with Send: the header keeps its room for the name in a narrow sidebar.
        h('div', { class: 'row compose-foot' }, this.thinking, this.cost, this.send, this.stop)));
  }

  render(s: ViewState): void {
    if (document.activeElement !== this.name) this.name.value = s.chatName;
    if (this.input.value !== s.draft) this.input.value = s.draft;
    const streaming = isStreaming(s);
    for (const [mode, b] of Object.entries(this.modeButtons) as Array<[ChatMode, HTMLButtonElement]>) {
      b.setAttribute('aria-pressed', String(s.mode === mode));
      b.classList.toggle('on', s.mode === mode);
      b.disabled = streaming;
    }
    if (this.thinking.value !== s.thinking) this.thinking.value = s.thinking;
    this.thinking.disabled = streaming;
    this.input.placeholder = s.mode === 'agent'
      ? 'Give the agent a task in this workspace… (Enter sends; every change and command waits for you)'
      : 'Ask the local model… (Enter sends, Shift+Enter for a new line)';
    this.send.disabled = streaming || !!s.estimate?.error;
    this.send.hidden = streaming;
    this.stop.disabled = !streaming;
    this.stop.hidden = !streaming;
    this.save.disabled = streaming || conversation(s.turns).length === 0;
    this.chips.replaceChildren(
      ...s.draftContext.map((c) => chip(c, () => { this.host.update(removeContext(this.host.state(), c.id)); this.scheduleEstimate(); })),
      ...(s.draftImages ?? []).map((i) => imageChip(i, () => { this.host.update(removeImage(this.host.state(), i.id)); this.scheduleEstimate(); })));
    this.renderCost(s);
    this.renderAgentWork(s);
    this.renderMeter(s, streaming);
    this.renderTurns(s);
    const key = estimateKey(s);
    if (key !== this.lastEstimateKey && !streaming) this.scheduleEstimate();
  }

  private renderCost(s: ViewState): void {
    const e = s.estimate;
    if (!s.draft.trim() && !s.draftContext.length && !s.draftImages?.length) { this.cost.replaceChildren(); return; }
    if (!e || e.tokens === null) { this.cost.replaceChildren(e?.error ? h('span', { class: 'error' }, e.error) : 'counting tokens…'); return; }
    const size = e.budget !== null ? `≈ ${e.tokens.toLocaleString()} of ${e.budget.toLocaleString()} prompt tokens` : `≈ ${e.tokens.toLocaleString()} tokens (estimate: start the server for an exact count)`;
    const extra = e.error ? h('span', { class: 'error' }, ` · ${e.error}`) : e.note ? h('span', { class: 'warn' }, ` · ${e.note}`) : null;
    this.cost.replaceChildren(h('span', {}, size), ...(extra ? [extra] : []));
  }

  private renderAgentWork(s: ViewState): void {
    const w = s.agentWork;
    const running = w.todo && s.turns.some((t) => t.pending && t.chatId === w.todo!.chatId) ? w.todo : null;
    const plan = w.restorePlan && s.turns.some((t) => t.chatId === w.restorePlan!.chatId) ? w.restorePlan : null;
    const rules = s.mode === 'agent' ? w.rules : null;
    // Redrawn only when one of them changed (an open diff stays open while metrics update the view).
    const shown = [plan, running, rules];
    if (shown.every((x, i) => x === this.agentWorkShown[i])) return;
    this.agentWorkShown = shown;
    this.agentWork.replaceChildren(...[
      plan ? restorePlanEl(plan, () => this.host.post({ type: 'agentRestore', chatId: plan.chatId, stepId: plan.stepId }), () => this.host.update(cancelRestore(this.host.state()))) : null,
      running?.items.length ? todoEl(running.items) : null,
      rules ? rulesChips(rules) : null,
    ].filter((e): e is HTMLElement => e !== null));
  }

  /** Agent mode: the conversation's context use and the Compact action. */
  private renderMeter(s: ViewState, streaming: boolean): void {
    const ctx = s.mode === 'agent' ? latestContext(s.turns) : null;
    const compact = streaming || !conversation(s.turns).length ? null : () => this.host.post({ type: 'agentCompact', name: s.chatName, messages: conversation(this.host.state().turns) });
    const el = contextMeterEl(ctx, compact);
    this.meter.replaceChildren(...(el ? [el] : []));
  }

  private scheduleEstimate(): void {
    clearTimeout(this.estimateTimer);
    this.estimateTimer = setTimeout(() => {
      const s = this.host.state();
      this.lastEstimateKey = estimateKey(s);
      const req = estimateRequest(s, ++this.estimateSeq);
      if (req) this.host.post(req);
    }, ESTIMATE_DELAY_MS);
  }

  private renderTurns(s: ViewState): void {
    const turns = s.turns;
    const atBottom = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 40;
    if (!turns.length) {
      this.rendered = [];
      this.thinkingOpen.clear();
      this.log.replaceChildren(h('p', { class: 'muted' }, 'Chat with the model the Strata server runs on this machine. Nothing leaves it. Attach a selection or a file with @ (or Ctrl+Alt+A in an editor).'));
      return;
    }
    if (this.rendered.length === 0) this.log.replaceChildren();
    // The reducer replaces only the turns that changed, so identity finds the first change; the
    // last turns also redraw when their "last" status (which actions they offer) changes.
    const lastUser = turns.map((t) => t.role).lastIndexOf('user');
    const isLast = (i: number): boolean => i >= lastUser;
    let i = 0;
    while (i < this.rendered.length && i < turns.length && this.rendered[i]!.turn === turns[i] && this.rendered[i]!.last === isLast(i)) i++;
    for (const r of this.rendered.splice(i)) r.el.remove();
    for (; i < turns.length; i++) {
      const el = this.turnEl(turns[i]!, isLast(i), s);
      this.log.append(el);
      this.rendered.push({ turn: turns[i]!, el, last: isLast(i) });
    }
    if (atBottom) this.log.scrollTop = this.log.scrollHeight;
  }

  private turnEl(t: ChatTurn, last: boolean, s: ViewState): HTMLElement {
    const who = t.role === 'user' ? 'You' : t.role === 'system' ? 'System' : 'Strata';
    const content = t.role === 'assistant'
      ? t.steps?.length ? this.agentContent(t) : h('div', { class: 'content markdown' }, ...renderMarkdown(t.content, this.actions), t.pending && !t.content && !t.reasoning ? h('span', { class: 'muted' }, 'thinking…') : null)
      : h('div', { class: 'content plain' }, t.text ?? t.content);
    const tools = t.pending ? null : h('div', { class: 'turn-actions' },
      t.content ? iconButton('copy', t.role === 'user' ? 'Copy question' : 'Copy answer', () => this.host.post({ type: 'copy', text: t.role === 'user' ? (t.text ?? t.content) : t.content })) : null,
      t.role === 'assistant' && last && canRegenerate(s) ? iconButton('refresh', 'Regenerate answer', () => this.regenerate()) : null,
      t.role === 'user' && last && !isStreaming(s) ? iconButton('edit', 'Edit question', () => this.host.update(editLastQuestion(this.host.state()))) : null);
    return h('div', { class: `turn ${t.role}${t.pending ? ' pending' : ''}${t.error ? ' failed' : ''}` },
      h('div', { class: 'turn-head' }, h('span', { class: 'who' }, who), tools),
      this.thinkingEl(t),
      t.context?.length ? h('div', { class: 'ctx-chips', role: 'list', 'aria-label': 'Context sent' }, ...t.context.map((c) => chip(c, null))) : null,
      t.images?.length ? h('div', { class: 'ctx-chips', role: 'list', 'aria-label': 'Images sent' }, ...t.images.map((i) => imageChip(i, null))) : null,
      content,
      ...(t.role !== 'assistant' || !t.steps?.length ? (t.compactions ?? []).map(compactionEl) : []),
      t.role === 'user' && t.context?.length && t.text !== undefined && t.content !== t.text
        ? h('details', { class: 'sent' }, h('summary', { class: 'muted' }, 'What was sent'), h('pre', { class: 'sent-text' }, t.content)) : null,
      t.note ? h('div', { class: 'warn note', role: 'note' }, t.note) : null,
      t.error ? h('div', { class: 'error', role: 'alert' }, t.error) : null,
      t.stats ? h('div', { class: 'stats muted' }, t.stats) : null);
  }

  /** An agent answer: its texts with the tool steps between them, where the model called them. */
  private agentContent(t: ChatTurn): HTMLElement {
    const el = h('div', { class: 'content markdown agent' });
    const steps = t.steps ?? [];
    const waiting = steps.filter((x) => x.ask === 'change').length;
    const actions = this.stepActions(t.chatId ?? '');
    let from = 0;
    const markers = t.compactions ?? [];
    steps.forEach((step, i) => {
      const text = t.content.slice(from, step.at);
      if (text.trim()) el.append(...renderMarkdown(text, this.actions));
      from = Math.max(from, step.at);
      el.append(...markers.filter((c) => c.afterSteps === i).map(compactionEl), stepEl(step, actions, waiting));
    });
    el.append(...markers.filter((c) => c.afterSteps < 0 || c.afterSteps >= steps.length).map(compactionEl));
    const rest = t.content.slice(from);
    if (rest.trim()) el.append(...renderMarkdown(rest, this.actions));
    else if (t.pending && steps.every((x) => x.status !== 'waiting')) el.append(h('span', { class: 'muted' }, 'working…'));
    return el;
  }

  /** The model's thinking as a <details> block above the answer (outside .content: it is not the answer). */
  private thinkingEl(t: ChatTurn): HTMLElement | null {
    const key = t.chatId ?? '';
    const view = thinkingView(t, this.thinkingOpen.get(key));
    if (!view) return null;
    const body = h('div', { class: 'thinking-text muted' }, view.text);
    body.style.whiteSpace = 'pre-wrap'; // CSSOM, allowed by the CSP (no inline style attributes)
    const details = h('details', { class: 'thinking', open: view.open }, h('summary', { class: 'muted' }, view.label), body);
    // Remember only the user's own toggles (setting `open` above fires a toggle event too).
    details.addEventListener('toggle', () => {
      if (details.open !== view.open || this.thinkingOpen.has(key)) this.thinkingOpen.set(key, details.open);
    });
    return details;
  }

  /** Reads the files and attaches each image to the draft; the extension counts its tokens. */
  private async attach(files: File[]): Promise<void> {
    for (const file of files) {
      let image: ImageAttachment;
      try {
        image = await readImage(file, this.newId());
      } catch (err) {
        this.host.update({ ...this.host.state(), notice: { level: 'error', text: `${file.name}: ${(err as Error).message}` } });
        continue;
      }
      const r = addImage(this.host.state(), image, file.type);
      this.host.update(r.state);
      if (r.out) this.host.post(r.out);
    }
    this.scheduleEstimate();
  }

  private submit(): void {
    const r = sendChat(this.host.state(), this.newId());
    if (!r.out) return;
    this.host.update(r.state);
    this.host.post(r.out);
  }

  private regenerate(): void {
    const r = regenerate(this.host.state(), this.newId());
    if (!r.out) return;
    this.host.update(r.state);
    this.host.post(r.out);
  }

  private saveSession(): void {
    const s = this.host.state();
    const name = s.chatName.trim();
    const problem = sessionNameAdvice(name);
    if (problem) {
      this.host.update({ ...s, notice: { level: 'error', text: problem } });
      this.name.focus();
      return;
    }
    this.host.post({ type: 'sessionSave', name, messages: conversation(s.turns), mode: s.mode, thinking: s.thinking });
  }
}
