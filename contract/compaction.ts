// How a compacted agent conversation carries its summary: on the question it goes on from, after
// a marker line. Shared by the extension (which writes it) and the panel (which shows the question
// and the summary apart, also in a restored session).

const MARK_OPEN = '\n\n[Context compacted: ';
const MARK_CLOSE = '. Summary of the work so far:]\n';

/** The question the conversation goes on from, with the summary (an earlier summary on it is replaced). */
export function withSummary(question: string, label: string, summary: string): string {
  return `${splitSummary(question).question}${MARK_OPEN}${label}${MARK_CLOSE}${summary.trim()}`;
}

/** A question message split into the user's question and the summary compaction put on it (if any). */
export function splitSummary(content: string): { question: string; label: string | null; summary: string | null } {
  const at = content.indexOf(MARK_OPEN);
  if (at < 0) return { question: content, label: null, summary: null };
  const end = content.indexOf(MARK_CLOSE, at);
  if (end < 0) return { question: content, label: null, summary: null };
  return { question: content.slice(0, at), label: content.slice(at + MARK_OPEN.length, end), summary: content.slice(end + MARK_CLOSE.length) };
}
