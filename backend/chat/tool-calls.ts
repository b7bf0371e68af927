// Streaming tool-call parser: model text in (split anywhere), content and tool calls out.
//
// Formats:
//   hermes   <tool_call>{"name": .., "arguments": {..}}</tool_call>   (Qwen, Hermes; several, text around)
//   llama3   <|python_tag|>{"name": .., "parameters": {..}}  or  name.call(k="v")  (built-in tools),
//            and a bare {"name": .., "parameters": {..}} at the start of the message
//   mistral  [TOOL_CALLS][{"name": .., "arguments": {..}, "id": ..}]  or  [TOOL_CALLS]name[ARGS]{..}
//
// A call is emitted once it is complete and valid (tool_call, then its whole arguments as one
// tool_args piece), so nothing already sent has to be taken back. Its arguments come out in the
// JSON style the template prints them in (CallStyle.json), and the whitespace between content and
// a call, or between calls, is not content: templates write it themselves, so a call sent back
// re-renders as the very text the model wrote. Anything that turns out not to be a call — bad
// JSON, missing name, a tag in prose, output cut short — comes back as content, character for
// character. Nothing the model writes makes this throw.
import { randomBytes } from 'node:crypto';
import { continueJsonScan, startJsonScan, type JsonScan } from './json-scan.js';
import { pyJson } from './template-input.js';
import type { CallStyle, ToolCall, ToolCallFormat } from './chat-types.js';

export type ParsedDelta = { type: 'content'; text: string }
  | { type: 'tool_call'; index: number; id: string; name: string }
  | { type: 'tool_args'; index: number; text: string };

interface FoundCall { name: string; args: string; id?: string }

/** What a call parser decided about the text at the head of the buffer. */
type Outcome =
  | { kind: 'wait' }
  | { kind: 'invalid' }
  | { kind: 'calls'; consumed: number; calls: FoundCall[] };

type State =
  | { kind: 'text' }
  /** The buffer starts with `marker`; scan follows the JSON after it once found. */
  | { kind: 'tagged'; marker: string; scan: JsonScan | null }
  /** llama3: the buffer is leading whitespace then '{' at `brace`. */
  | { kind: 'bare'; brace: number; scan: JsonScan };

const HERMES_CLOSE = '</tool_call>';
/** What opens a call, per format. */
const MARKERS: Record<ToolCallFormat, string[]> = {
  hermes: ['<tool_call>'],
  llama3: ['<|python_tag|>'],
  mistral: ['[TOOL_CALLS]'],
  none: [],
};
/**
 * Every marker text the parser reads, per format. Where the vocabulary makes one a special token,
 * the chat route asks the engine to render it (renderTokens), or the parser would never see it.
 */
export const TOOL_MARKER_TEXTS: Readonly<Record<ToolCallFormat, readonly string[]>> = {
  hermes: [...MARKERS.hermes, HERMES_CLOSE],
  llama3: MARKERS.llama3,
  mistral: [...MARKERS.mistral, '[CALL_ID]', '[ARGS]'],
  none: [],
};
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const WAIT: Outcome = { kind: 'wait' };
const INVALID: Outcome = { kind: 'invalid' };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\n' || c === '\r' || c === '\t';
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text[i])) i++;
  return i;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

type JsonStyle = CallStyle['json'];

/** Arguments as a JSON object text in `style`, from an object or a string holding one; null if neither. */
function argumentsText(value: unknown, style: JsonStyle): string | null {
  const text = (v: unknown): string => (style === 'python' ? pyJson(v) : JSON.stringify(v));
  if (isObject(value)) return text(value);
  if (typeof value === 'string') {
    const parsed = parseJson(value);
    return parsed.ok && isObject(parsed.value) ? text(parsed.value) : null;
  }
  return null;
}

/** {"name", "arguments"|"parameters", "id"?} -> a call; `requireArgs` for bare JSON, which prose may resemble. */
function toCall(value: unknown, style: JsonStyle, requireArgs = false): FoundCall | null {
  if (!isObject(value)) return null;
  if (typeof value.name !== 'string' || value.name === '') return null;
  if (value.type !== undefined && value.type !== 'function') return null;
  const hasArgs = 'arguments' in value || 'parameters' in value;
  if (requireArgs && !hasArgs) return null;
  const args = !hasArgs ? '{}' : argumentsText('arguments' in value ? value.arguments : value.parameters, style);
  if (args === null) return null;
  const call: FoundCall = { name: value.name, args };
  if (typeof value.id === 'string' && value.id !== '') call.id = value.id;
  return call;
}

/** One call object or a non-empty array of them; null if any element is not a call. */
function toCalls(value: unknown, style: JsonStyle): FoundCall[] | null {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return null;
  const calls: FoundCall[] = [];
  for (const item of items) {
    const call = toCall(item, style);
    if (!call) return null;
    calls.push(call);
  }
  return calls;
}

/** Length of the whitespace `text` ends with. */
function trailingSpace(text: string, end = text.length): number {
  let i = end;
  while (i > 0 && isSpace(text[i - 1])) i--;
  return end - i;
}

/** Length of the longest proper prefix of a marker that `text` ends with. */
function partialMarkerTail(text: string, markers: string[]): number {
  let best = 0;
  for (const m of markers) {
    for (let n = Math.min(m.length - 1, text.length); n > best; n--) {
      if (text.endsWith(m.slice(0, n))) { best = n; break; }
    }
  }
  return best;
}

/** Llama's built-in tool syntax: name.call(query="x", n=3). */
function parsePythonCall(text: string, style: JsonStyle): FoundCall | null {
  const m = /^([A-Za-z_]\w*)\.call\(([\s\S]*)\)\s*$/.exec(text);
  if (!m) return null;
  const args: Record<string, unknown> = {};
  const body = m[2]!.trim();
  if (body !== '') {
    const kw = /\s*([A-Za-z_]\w*)\s*=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|True|False|None)\s*(,|$)/y;
    let pos = 0;
    while (pos < body.length) {
      kw.lastIndex = pos;
      const a = kw.exec(body);
      if (!a) return null;
      const raw = a[2]!;
      let v: unknown;
      if (raw.startsWith('"')) v = parseJson(raw).ok ? JSON.parse(raw) : raw.slice(1, -1);
      else if (raw.startsWith("'")) v = raw.slice(1, -1).replace(/\\(.)/g, '$1');
      else if (raw === 'True' || raw === 'False') v = raw === 'True';
      else if (raw === 'None') v = null;
      else v = Number(raw);
      args[a[1]!] = v;
      pos = kw.lastIndex;
      if (a[3] === '' && pos < body.length) return null;
    }
  }
  return { name: m[1]!, args: style === 'python' ? pyJson(args) : JSON.stringify(args) };
}

export class ToolCallStreamParser {
  private buf = '';
  private state: State = { kind: 'text' };
  /** llama3: no content but whitespace yet, so a bare JSON call may still start. */
  private atStart = true;
  private readonly found: ToolCall[] = [];
  private readonly usedIds = new Set<string>();
  private readonly parsing: boolean;
  private readonly markers: string[];
  private readonly json: JsonStyle;
  /** Whitespace between content and the call being read: dropped with a call, content without one. */
  private gap = '';
  private ended = false;

  constructor(private readonly format: ToolCallFormat, opts: { toolsEnabled?: boolean; json?: JsonStyle } = {}) {
    this.parsing = (opts.toolsEnabled ?? true) && format !== 'none';
    this.markers = this.parsing ? MARKERS[format] : [];
    this.json = opts.json ?? 'python';
  }

  /** Completed, valid calls so far, in order. */
  get calls(): readonly ToolCall[] {
    return this.found;
  }

  push(text: string): ParsedDelta[] {
    if (this.ended) throw new Error('ToolCallStreamParser: push() after end()');
    this.buf += text;
    return this.process(false);
  }

  /** Flushes: a call still open is judged on what arrived; what is not a call comes back as content. */
  end(): ParsedDelta[] {
    if (this.ended) return [];
    this.ended = true;
    return this.process(true);
  }

  private process(final: boolean): ParsedDelta[] {
    const out: ParsedDelta[] = [];
    const content = (text: string): void => {
      if (text === '') return;
      if (this.atStart && /\S/.test(text)) this.atStart = false;
      const last = out[out.length - 1];
      if (last && last.type === 'content') last.text += text;
      else out.push({ type: 'content', text });
    };

    for (;;) {
      const st = this.state;
      if (st.kind === 'text') {
        if (!this.scanText(final, content)) break;
        continue;
      }
      const outcome = st.kind === 'tagged' ? this.parseTagged(st, final) : this.parseBare(st, final);
      if (outcome.kind === 'wait') break;
      if (outcome.kind === 'invalid') {
        // Give back the opening (marker, or whitespace and '{') as text and read on after it.
        const n = st.kind === 'tagged' ? st.marker.length : st.brace + 1;
        content(this.gap + this.buf.slice(0, n));
        this.buf = this.buf.slice(n);
        if (st.kind === 'bare') this.atStart = false;
      } else {
        for (const call of outcome.calls) this.emitCall(call, out);
        this.buf = this.buf.slice(outcome.consumed);
      }
      this.gap = '';
      this.state = { kind: 'text' };
    }
    return out;
  }

  /** Emits plain text up to the next call opening. Returns true when it switched state (run again). */
  private scanText(final: boolean, content: (t: string) => void): boolean {
    const buf = this.buf;
    if (!this.parsing) {
      const keep = final ? 0 : this.surrogateTail(buf, buf.length);
      content(buf.slice(0, buf.length - keep));
      this.buf = buf.slice(buf.length - keep);
      return false;
    }
    if (this.format === 'llama3' && this.atStart) {
      const first = skipSpace(buf, 0);
      if (first === buf.length) {
        // Only whitespace so far: hold it, a bare JSON call may follow.
        if (final) { content(buf); this.buf = ''; }
        return false;
      }
      if (buf[first] === '{') {
        this.state = { kind: 'bare', brace: first, scan: startJsonScan(first) };
        return true;
      }
      this.atStart = false;
    }
    let hit = -1;
    let marker = '';
    for (const m of this.markers) {
      const i = buf.indexOf(m);
      if (i >= 0 && (hit < 0 || i < hit)) { hit = i; marker = m; }
    }
    if (hit >= 0) {
      const space = trailingSpace(buf, hit);
      content(buf.slice(0, hit - space));
      this.gap = buf.slice(hit - space, hit);
      this.buf = buf.slice(hit);
      this.state = { kind: 'tagged', marker, scan: null };
      return true;
    }
    // Held back: what may start a marker, the whitespace before it (a call may follow), a cut surrogate pair.
    let keep = final ? 0 : partialMarkerTail(buf, this.markers);
    if (!final) keep += trailingSpace(buf, buf.length - keep);
    if (!final) keep += this.surrogateTail(buf, buf.length - keep);
    content(buf.slice(0, buf.length - keep));
    this.buf = buf.slice(buf.length - keep);
    return false;
  }

  /** 1 when text[0..end) ends with a high surrogate whose partner has not arrived. */
  private surrogateTail(text: string, end: number): number {
    if (end <= 0) return 0;
    const c = text.charCodeAt(end - 1);
    return c >= 0xd800 && c <= 0xdbff ? 1 : 0;
  }

  private parseTagged(st: Extract<State, { kind: 'tagged' }>, final: boolean): Outcome {
    const buf = this.buf;
    const i = skipSpace(buf, st.marker.length);
    if (i >= buf.length) return final ? INVALID : WAIT;
    if (this.format === 'mistral' && buf[i] !== '[' && buf[i] !== '{') return this.parseMistralNamed(i, final);
    if (buf[i] !== '{' && buf[i] !== '[') {
      if (this.format !== 'llama3') return INVALID;
      // <|python_tag|>name.call(...): judged when the message ends.
      if (!final) return WAIT;
      const call = parsePythonCall(buf.slice(i), this.json);
      return call ? { kind: 'calls', consumed: buf.length, calls: [call] } : INVALID;
    }
    st.scan ??= startJsonScan(i);
    const end = continueJsonScan(buf, st.scan, this.format === 'hermes' ? HERMES_CLOSE : undefined);
    if (end === -2 || (end < 0 && final)) return INVALID;
    if (end < 0) return WAIT;
    const parsed = parseJson(buf.slice(st.scan.start, end));
    if (!parsed.ok) return INVALID;
    const calls = this.format === 'llama3' ? [toCall(parsed.value, this.json)] : toCalls(parsed.value, this.json);
    if (!calls || calls.some((c) => c === null)) return INVALID;
    const valid = calls as FoundCall[];
    if (this.format !== 'hermes') return { kind: 'calls', consumed: end, calls: valid };

    // Hermes: the closing tag must follow (a model may stop right before it).
    const j = skipSpace(buf, end);
    if (buf.startsWith(HERMES_CLOSE, j)) return { kind: 'calls', consumed: j + HERMES_CLOSE.length, calls: valid };
    const rest = buf.slice(j);
    if (HERMES_CLOSE.startsWith(rest)) return final ? { kind: 'calls', consumed: buf.length, calls: valid } : WAIT;
    return INVALID;
  }

  /** Mistral v11+: [TOOL_CALLS]name[ARGS]{...} or [TOOL_CALLS]name[CALL_ID]id[ARGS]{...}. */
  private parseMistralNamed(i: number, final: boolean): Outcome {
    const buf = this.buf;
    const nameMatch = /^[A-Za-z0-9_.-]+/.exec(buf.slice(i, i + 256));
    if (!nameMatch) return INVALID;
    let j = i + nameMatch[0].length;
    if (j >= buf.length) return final ? INVALID : WAIT;
    let id: string | undefined;
    const expect = (tag: string): 'ok' | 'wait' | 'bad' => {
      const rest = buf.slice(j, j + tag.length);
      if (rest === tag) { j += tag.length; return 'ok'; }
      return tag.startsWith(rest) && j + rest.length === buf.length ? 'wait' : 'bad';
    };
    let r: 'ok' | 'wait' | 'bad';
    const callId = expect('[CALL_ID]');
    if (callId === 'ok') {
      id = /^[A-Za-z0-9_-]*/.exec(buf.slice(j, j + 64))![0];
      j += id.length;
      if (j >= buf.length) return final ? INVALID : WAIT;
      r = expect('[ARGS]');
    } else {
      const args = expect('[ARGS]');
      r = args === 'bad' && callId === 'wait' ? 'wait' : args;
    }
    if (r === 'wait') return final ? INVALID : WAIT;
    if (r === 'bad') return INVALID;
    j = skipSpace(buf, j);
    if (j >= buf.length) return final ? INVALID : WAIT;
    if (buf[j] !== '{') return INVALID;
    const st = this.state as Extract<State, { kind: 'tagged' }>;
    st.scan ??= startJsonScan(j);
    const end = continueJsonScan(buf, st.scan);
    if (end < 0) return final ? INVALID : WAIT;
    const parsed = parseJson(buf.slice(st.scan.start, end));
    const args = parsed.ok ? argumentsText(parsed.value, this.json) : null;
    if (args === null) return INVALID;
    const call: FoundCall = { name: nameMatch[0], args };
    if (id) call.id = id;
    return { kind: 'calls', consumed: end, calls: [call] };
  }

  /** llama3 bare JSON at message start; rejected early when its first key is not "name" or "type". */
  private parseBare(st: Extract<State, { kind: 'bare' }>, final: boolean): Outcome {
    const buf = this.buf;
    const k = skipSpace(buf, st.brace + 1);
    if (k >= buf.length) return final ? INVALID : WAIT;
    if (buf[k] !== '"') return INVALID;
    const keyEnd = buf.indexOf('"', k + 1);
    if (keyEnd < 0) {
      const partial = buf.slice(k + 1);
      return !final && ('name'.startsWith(partial) || 'type'.startsWith(partial)) ? WAIT : INVALID;
    }
    const key = buf.slice(k + 1, keyEnd);
    if (key !== 'name' && key !== 'type') return INVALID;
    const end = continueJsonScan(buf, st.scan);
    if (end < 0) return final ? INVALID : WAIT;
    const parsed = parseJson(buf.slice(st.brace, end));
    const call = parsed.ok ? toCall(parsed.value, this.json, true) : null;
    if (!call) return INVALID;
    return { kind: 'calls', consumed: end, calls: [call] };
  }

  private emitCall(call: FoundCall, out: ParsedDelta[]): void {
    const index = this.found.length;
    const id = this.newId(call.id);
    this.found.push({ id, type: 'function', function: { name: call.name, arguments: call.args } });
    out.push({ type: 'tool_call', index, id, name: call.name });
    out.push({ type: 'tool_args', index, text: call.args });
  }

  /**
   * `call_` + 24 random characters; for Mistral, whose templates demand 9 alphanumerics, the
   * model's own id when it has that shape and is unused, else 9 random ones.
   */
  private newId(proposed: string | undefined): string {
    const mistral = this.format === 'mistral';
    const fits = mistral && proposed !== undefined && /^[A-Za-z0-9]{9}$/.test(proposed);
    let id = fits && !this.usedIds.has(proposed) ? proposed : '';
    while (id === '' || this.usedIds.has(id)) {
      const bytes = randomBytes(mistral ? 9 : 24);
      let s = '';
      for (const b of bytes) s += ALNUM[b % ALNUM.length];
      id = mistral ? s : 'call_' + s;
    }
    this.usedIds.add(id);
    return id;
  }
}
