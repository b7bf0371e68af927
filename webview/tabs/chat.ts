// Chat tab: streaming chat with the local model, named and saved as sessions.
import { sessionNameProblem, type FromWebview } from '../protocol.js';
import { conversation, isStreaming, newChat, sendChat, thinkingView, type ChatTurn, type ViewState } from '../state.js';
import { button, h } from '../dom.js';

export interface ChatHost {
  state(): ViewState;
  update(s: ViewState): void;
  post(m: FromWebview): void;
}

/** Code fences become <pre>; everything else stays text. */
function renderContent(text: string): Node[] {
  const out: Node[] = [];
  text.split(/```/).forEach((part, i) => {
    if (i % 2 === 1) {
      const nl = part.indexOf('\n');
      const code = nl >= 0 && /^[\w+-]*$/.test(part.slice(0, nl)) ? part.slice(nl + 1) : part;
      out.push(h('pre', {}, h('code', {}, code)));
    } else if (part) out.push(h('span', {}, part));
  });
  return out;
}

export class ChatTab {
  readonly el: HTMLElement;
  private readonly log: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly name: HTMLInputElement;
  private readonly send: HTMLButtonElement;
  private readonly stop: HTMLButtonElement;
  private readonly save: HTMLButtonElement;
  private rendered: Array<{ turn: ChatTurn; el: HTMLElement }> = [];
  /** Thinking blocks the user opened or closed (by chatId): a turn is redrawn on every delta. */
  private readonly thinkingOpen = new Map<string, boolean>();

  constructor(private readonly host: ChatHost, private readonly newId: () => string) {
    this.name = h('input', { type: 'text', class: 'chat-name', placeholder: 'session name (letters, digits, . _ -)', 'aria-label': 'Conversation name', maxlength: 64 });
    this.name.addEventListener('input', () => host.update({ ...host.state(), chatName: this.name.value }));
    this.save = button('Save as session', () => this.saveSession(), { title: 'Save this conversation (its KV cache) as a named session' });
    const fresh = button('New chat', () => host.update(newChat(host.state())));
    this.log = h('div', { class: 'chat-log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
    this.input = h('textarea', { class: 'chat-input', rows: 3, placeholder: 'Ask the local model… (Enter sends, Shift+Enter for a new line)', 'aria-label': 'Message' });
    this.input.addEventListener('input', () => host.update({ ...host.state(), draft: this.input.value }));
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
    });
    this.el = h('div', { class: 'chat' },
      h('div', { class: 'row' }, this.name, this.save, fresh),
      this.log,
      h('div', { class: 'chat-compose' }, this.input, h('div', { class: 'col' }, this.send, this.stop)));
  }

  render(s: ViewState): void {
    if (document.activeElement !== this.name) this.name.value = s.chatName;
    if (this.input.value !== s.draft) this.input.value = s.draft;
    const streaming = isStreaming(s);
    this.send.disabled = streaming;
    this.stop.disabled = !streaming;
    this.stop.hidden = !streaming;
    this.save.disabled = streaming || conversation(s.turns).length === 0;
    this.renderTurns(s.turns);
  }

  private renderTurns(turns: ChatTurn[]): void {
    const atBottom = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 40;
    if (!turns.length) {
      this.rendered = [];
      this.thinkingOpen.clear();
      this.log.replaceChildren(h('p', { class: 'muted' }, 'Chat with the model the Strata server runs on this machine. Nothing leaves it.'));
      return;
    }
    if (this.rendered.length === 0) this.log.replaceChildren();
    // The reducer replaces only the turns that changed, so identity finds the first change.
    let i = 0;
    while (i < this.rendered.length && i < turns.length && this.rendered[i]!.turn === turns[i]) i++;
    for (const r of this.rendered.splice(i)) r.el.remove();
    for (; i < turns.length; i++) {
      const el = this.turnEl(turns[i]!);
      this.log.append(el);
      this.rendered.push({ turn: turns[i]!, el });
    }
    if (atBottom) this.log.scrollTop = this.log.scrollHeight;
  }

  private turnEl(t: ChatTurn): HTMLElement {
    const who = t.role === 'user' ? 'You' : t.role === 'system' ? 'System' : 'Strata';
    return h('div', { class: `turn ${t.role}${t.pending ? ' pending' : ''}${t.error ? ' failed' : ''}` },
      h('div', { class: 'who' }, who),
      this.thinkingEl(t),
      h('div', { class: 'content' }, ...renderContent(t.content), t.pending && !t.content && !t.reasoning ? h('span', { class: 'muted' }, 'thinking…') : null),
      t.error ? h('div', { class: 'error', role: 'alert' }, t.error) : null,
      t.stats ? h('div', { class: 'stats muted' }, t.stats) : null);
  }

  /** The model's thinking as a <details> block above the answer (outside .content: it is not the answer). */
  private thinkingEl(t: ChatTurn): HTMLElement | null {
    const key = t.chatId ?? '';
    const view = thinkingView(t, this.thinkingOpen.get(key));
    if (!view) return null;
    const body = h('div', { class: 'thinking-text muted' }, ...renderContent(view.text));
    body.style.whiteSpace = 'pre-wrap'; // CSSOM, allowed by the CSP (no inline style attributes)
    const details = h('details', { class: 'thinking', open: view.open }, h('summary', { class: 'muted' }, view.label), body);
    // Remember only the user's own toggles (setting `open` above fires a toggle event too).
    details.addEventListener('toggle', () => {
      if (details.open !== view.open || this.thinkingOpen.has(key)) this.thinkingOpen.set(key, details.open);
    });
    return details;
  }

  private submit(): void {
    const r = sendChat(this.host.state(), this.newId());
    if (!r.out) return;
    this.host.update(r.state);
    this.host.post(r.out);
  }

  private saveSession(): void {
    const s = this.host.state();
    const name = s.chatName.trim();
    const problem = sessionNameProblem(name);
    if (problem) {
      this.host.update({ ...s, notice: { level: 'error', text: problem } });
      this.name.focus();
      return;
    }
    this.host.post({ type: 'sessionSave', name, messages: conversation(s.turns) });
  }
}
