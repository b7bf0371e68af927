// Shared by the agents-*.test.ts files: one real coding agent, started by `strata launch`, against a
// real server on the agent test model (a random-weight model: the server's test switch
// --first-tool-call required makes its first answer a call; every argument and every word is the
// model's own), and what the exchange shows: the first request accepted, a call the client ran and
// answered, the last answer's text in the client's output, nothing sent off this machine.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { AGENT_MODEL_CONTEXT, ensureAgentTestModel } from '../helpers/agent-model.js';
import {
  agentFolders, modelRequests, readTurn, sessionRequests, recordingFixtures, runLaunch, scrubbed, startRecorder, startTrap, turns, type AgentRun, type Dialect, type Exchange, type TurnReading, writeFixture,
  writeSessionFixture,
} from '../helpers/agent-run.js';
import type { AgentName } from '../../backend/cli/launch-clients.js';
import { startServer } from './server-helpers.js';

export const AGENT_PROMPT = 'Read notes.md and say what the build uses.';
/** The task of the second session a recording run starts (a new session with another task). */
const SECOND_PROMPT = 'List the files of this folder and say which one is the largest.';
const KEY = 'sk-strata-agent-test';

export interface AgentOutcome {
  run: AgentRun;
  exchanges: Exchange[];
  /** The turns that offered tools, in order, each read. */
  turns: Array<{ exchange: Exchange; reading: TurnReading }>;
  /** Hosts something tried to reach through the proxy. */
  escaped: string[];
  logs: string[];
}

export interface AgentCase {
  /**
   * The agent's arguments: with the tests' limits on its tools, or (`defaults`, when the run records
   * its first request as a fixture) with its default tools.
   */
  args(defaults: boolean): string[];
  env?: Record<string, string>;
  /** Files in its workspace that limit it (left out when recording). */
  files?: Record<string, string>;
  timeoutMs?: number;
}

export async function runAgent(name: AgentName, dialect: Dialect, o: AgentCase): Promise<AgentOutcome> {
  const recording = recordingFixtures();
  const srv = await startServer(await ensureAgentTestModel(), {
    ctx: AGENT_MODEL_CONTEXT, slots: 1, batch: 512, apiKey: KEY, firstToolCall: 'required',
    // One engine thread: the client shares the 2 cores, and a spinning second thread costs more than it gives.
    threads: 1,
    // A client that sets no limit of its own (Codex) still gets a bounded answer.
    maxOutputTokens: 1024,
  });
  const recorder = await startRecorder(srv.port);
  const trap = await startTrap();
  const folders = agentFolders();
  for (const [file, text] of Object.entries(recording ? {} : o.files ?? {})) writeFileSync(join(folders.cwd, file), text);
  try {
    const launch = (args: string[]) => runLaunch(name, {
      url: recorder.url, apiKey: KEY, cwd: folders.cwd, home: folders.home, trap: trap.url, args, env: o.env ?? {}, timeoutMs: o.timeoutMs ?? 100_000,
    });
    const run = await launch(o.args(recording));
    const agentTurns = turns(recorder.exchanges, dialect).map((exchange) => ({ exchange, reading: readTurn(exchange, dialect) }));
    if (recording && agentTurns[0]) {
      writeFixture(name, scrubbed(agentTurns[0].exchange.body, folders));
      // A second session of the same client in the same project, with another task: its first
      // request is the one a prefix cache should find mostly read already.
      const session = sessionRequests(recorder.exchanges, dialect);
      const before = recorder.exchanges.length;
      const again = await launch(o.args(recording).map((a) => (a === AGENT_PROMPT ? SECOND_PROMPT : a)));
      const second = modelRequests(recorder.exchanges.slice(before), dialect)
        .find((e) => Array.isArray(e.body?.tools) && e.body.tools.length > 0);
      if (second) {
        const keep = (e: Exchange) => ({ path: e.path, body: scrubbed(e.body, folders) });
        writeSessionFixture(name, session.map(keep), keep(second));
      } else {
        console.warn(`${name}: the second session sent no request with tools (exit ${again.code}); its session fixture is not written\n${again.stderr.slice(-2000)}`);
      }
    }
    return { run, exchanges: [...recorder.exchanges], turns: agentTurns, escaped: [...trap.seen], logs: srv.logs };
  } finally {
    await recorder.close();
    await trap.close();
    await srv.close();
    folders.remove();
  }
}

/** The loop's outcome, the same for every client. */
export function expectLoop(out: AgentOutcome): void {
  const refused = out.exchanges.filter((e) => e.status !== 200).map((e) => {
    const items = e.body?.input ?? e.body?.messages;
    return `${e.status} ${e.response.slice(0, 500)}\n  for the last items sent: ${JSON.stringify(Array.isArray(items) ? items.slice(-3) : e.body).slice(0, 2000)}`;
  });
  const why = `exit ${out.run.code} after ${out.run.ms} ms\nstdout:\n${out.run.stdout.slice(-2000)}\nstderr:\n${out.run.stderr.slice(-3000)}\nrequests: ${out.exchanges.map((e) => `${e.method} ${e.path} ${e.status}`).join(', ')}\n${refused.join('\n')}\nserver:\n${out.logs.slice(-20).join('\n')}`;
  expect(out.run.code, why).toBe(0);
  // Every request was accepted, the first one included.
  expect(out.turns.length, why).toBeGreaterThanOrEqual(2);
  expect(out.exchanges.filter((e) => e.status !== 200).map((e) => `${e.method} ${e.path} ${e.status}: ${e.response.slice(0, 300)}`), why).toEqual([]);
  // The first answer is a call; a later request sends its result back.
  const [first, ...later] = out.turns;
  expect(first!.reading.calls.length, why).toBeGreaterThanOrEqual(1);
  const answered = later.flatMap((t) => t.reading.results);
  expect(answered, why).toContain(first!.reading.calls[0]);
  // The last answer is text without a call, and the client showed it.
  const last = out.turns.at(-1)!.reading;
  expect(last.calls, why).toEqual([]);
  const text = last.text.trim();
  if (text !== '') expect(out.run.stdout, why).toContain(text);
  expect(out.escaped, why).toEqual([]);
}
