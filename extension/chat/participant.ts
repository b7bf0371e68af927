// The @strata chat participant: answers from the Strata server directly (no other chat
// extension or model needed), plus /save NAME, /restore NAME, /sessions and /stats.
import * as vscode from 'vscode';
import type { ServerConnection } from '../server/connection.js';
import { CHAT_MAX_TOKENS } from '../client/types.js';
import { StartDeclined } from '../server/manager.js';
import { abortOn } from '../lm/provider.js';
import { rememberingSessions, type ConversationStore } from '../sessions/conversation-memory.js';
import { sessionsMarkdown, statsMarkdown } from './format.js';
import { sessionNameAdvice } from '../../contract/session-name.js';
import { conversationFromHistory, type RestoredMeta, type TurnLike } from './history.js';
import { ContextPlanner } from '../context/planner.js';
import { referenceItems } from '../context/references.js';
import { codebaseContext, mentionsCodebase, type CodebaseSearch } from '../context/codebase-context.js';

export const PARTICIPANT_ID = 'strata.chat';

export function registerChatParticipant(context: vscode.ExtensionContext, server: ServerConnection, conversations: ConversationStore, codebase?: CodebaseSearch): void {
  const planner = new ContextPlanner();
  context.subscriptions.push(server.onDidChange((s) => { if (s.state !== 'ready') planner.reset(); }));
  const handler: vscode.ChatRequestHandler = async (request, chatContext, stream, token) => {
    let client;
    try {
      client = rememberingSessions(await server.ensureReady(), conversations);
    } catch (err) {
      if (err instanceof StartDeclined) stream.markdown('The Strata server is not running. Run **Strata: Start Server** or **Strata: Select Model**.');
      else stream.markdown(`The Strata server is not available: ${(err as Error).message}`);
      return {};
    }
    const conversation = conversationFromHistory(chatContext.history as readonly TurnLike[], PARTICIPANT_ID);
    const name = request.prompt.trim();
    try {
      switch (request.command) {
        case 'save': {
          if (!name) { stream.markdown('Usage: `/save NAME` saves this conversation as a session.'); return {}; }
          const problem = sessionNameAdvice(name);
          if (problem) { stream.markdown(problem); return {}; }
          if (!conversation.length) { stream.markdown('Nothing to save yet: ask something first.'); return {}; }
          const saved = await client.saveSession(name, conversation);
          stream.markdown(`Saved session **${saved.name}** (${conversation.length} messages${saved.tokens !== null ? `, ${saved.tokens} tokens` : ''}).`);
          return {};
        }
        case 'restore': {
          if (!name) { stream.markdown('Usage: `/restore NAME` continues a saved session here. `/sessions` lists them.'); return {}; }
          const r = await client.restoreSession(name);
          if (!r.messages?.length) {
            stream.markdown(`Restored session **${r.name}** into the server's cache, but the server did not return its messages, so this chat cannot show them.`);
            return {};
          }
          stream.markdown(`Restored session **${r.name}** (${r.messages.length} messages${r.tokens !== null ? `, ${r.tokens} tokens` : ''}). Continue below.`);
          const last = r.messages.filter((m) => m.role === 'assistant').at(-1);
          if (last) stream.markdown(`\n\n> ${last.content.slice(0, 400).replace(/\n/g, '\n> ')}`);
          const restored: RestoredMeta = { name: r.name, messages: r.messages };
          return { metadata: { restored } };
        }
        case 'sessions':
          stream.markdown(sessionsMarkdown(await client.sessions()));
          return {};
        case 'stats':
          stream.markdown(statsMarkdown(await client.metrics()));
          return {};
      }
      if (!name) { stream.markdown('Ask a question, or use /save, /restore, /sessions, /stats.'); return {}; }
      // #file, #selection and other references go along as context, fitted like the panel chat's.
      const refs = await referenceItems(request.references ?? []);
      // #codebase: the codebase index's best chunks go along too, each a reference in the answer.
      if (mentionsCodebase(request.prompt)) {
        const found = await codebaseContext(codebase, request.prompt);
        if (typeof found === 'string') refs.skipped.push(`#codebase (${found})`);
        else refs.items.push(...found);
      }
      const plan = await planner.plan(client, [...conversation, { role: 'user' as const, content: request.prompt }], refs.items);
      for (const uri of refs.uris) stream.reference(uri);
      if (plan.error) return { errorDetails: { message: `Strata: ${plan.error}` } };
      // Said before the answer, and kept out of the history sent back (metadata.preface).
      const notes = [refs.skipped.length ? `Could not read ${refs.skipped.join(', ')}; left out.` : null, plan.note].filter(Boolean);
      const preface = notes.length ? `*${notes.join(' ')}*\n\n` : '';
      if (preface) stream.markdown(preface);
      const messages = plan.messages;
      const ac = abortOn(token);
      let usage = '';
      let thinking = false;
      for await (const ev of client.chatStream({ messages, maxTokens: CHAT_MAX_TOKENS }, ac.signal)) {
        if (ev.type === 'text') stream.markdown(ev.text);
        // Only the answer goes into the chat (and so into the history sent back); thinking is a progress line.
        else if (ev.type === 'reasoning' && !thinking) { thinking = true; stream.progress('Thinking…'); }
        else if (ev.type === 'done' && ev.timings?.predictedPerSecond) usage = `${ev.timings.predictedPerSecond.toFixed(1)} tok/s`;
      }
      return { metadata: { usage, preface } };
    } catch (err) {
      if (token.isCancellationRequested) return {};
      return { errorDetails: { message: `Strata: ${(err as Error).message}` } };
    }
  };
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, handler);
  participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icon.png');
  context.subscriptions.push(participant);
}
