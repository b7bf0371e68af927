// strata bench's scenarios against a real llama-server (built from the pinned source) on a
// tiny generated model with FIM tokens: every scenario runs, sizes its prompts as asked,
// reads the figures llama-server reports, every request completes (the tokens that are not
// valid UTF-8 alone are banned, so its output parser refuses nothing), and the launcher stops
// the whole process group. `npm run bench:check`; not part of `npm test`.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../common/net/free-port.js';
import { ServerProcess } from '../../tools/bench-compare/launch.js';
import { prepare, runOnce } from '../../backend/bench/runner.js';
import { defaultSettings, type BenchContext } from '../../backend/bench/types.js';
import type { BenchSettings } from '../../contract/bench.js';
import { invalidUtf8TokensOf } from '../../backend/bench/utf8-tokens.js';
import { ensureTestModel } from '../helpers/models.js';

const root = join(import.meta.dirname, '..', '..');
const SLOTS = 2;
const CTX = 2048;

const settings: BenchSettings = {
  ...defaultSettings,
  singleGen: 16, prefillSizes: [256, 4096], concurrentClients: [3], concurrentGen: 8,
  repeatTokens: 768, repeatFillerTokens: 128, mixedLongTokens: 1500, mixedShorts: 2,
  infillPrefixLines: 40, infillSuffixLines: 10, infillRequests: 3, infillGen: 4, requestTimeoutMs: 120_000,
  typingKeystrokes: 12, typingIntervalMs: 60, typingFileLines: 120, typingPrefixLines: 40, typingSuffixLines: 10,
  sessionTokens: 300, sessionRounds: 2, convUsers: 4, convTurns: 2, convInFlight: 2, convSystemTokens: 40, convFileTokens: 120,
  convQuestionTokens: 12, convAnswerTokens: 6,
};
const slotFiles = mkdtempSync(join(tmpdir(), 'strata-bench-slots-'));

let server: ServerProcess;
let ctx: BenchContext;

beforeAll(async () => {
  // Asynchronous, so the hook's timeout can fire; the build's progress goes to the terminal.
  const built = await promisify(execFile)(process.execPath, [join(root, 'scripts', 'build-native.mjs'), '--target', 'llama-server'],
    { encoding: 'utf8', maxBuffer: 64 << 20 });
  const bin = built.stdout.trim().split('\n').pop()!;
  const model = await ensureTestModel({ vocab: 'starcoder', shape: 'tiny', seed: 3 });
  const port = await freePort();
  server = await ServerProcess.start({
    name: 'llama-server', command: bin, url: `http://127.0.0.1:${port}`, logFile: join(root, 'test-output', 'bench-it-llama-server.log'),
    args: ['-m', model, '--host', '127.0.0.1', '--port', String(port), '-t', '2', '-tb', '2', '-c', String(CTX * SLOTS), '-np', String(SLOTS), '-b', '512', '--no-webui',
      '--metrics', '--slot-save-path', slotFiles],
  });
  ctx = await prepare({ url: `http://127.0.0.1:${port}`, settings, salt: 'it', progress: () => undefined, bannedTokens: await invalidUtf8TokensOf(model) });
});

afterAll(async () => {
  await server?.stop();
  rmSync(slotFiles, { recursive: true, force: true });
});

/** Every request of the run completed (none refused by llama-server's output parser). */
function allCompleted(r: Awaited<ReturnType<typeof runOnce>>): void {
  expect(r.error).toBeNull();
  expect(r.result!.requests.failures).toEqual([]);
  expect(r.result!.requests.failed).toBe(0);
  expect(r.result!.requests.sent).toBeGreaterThan(0);
}

const value = (r: Awaited<ReturnType<typeof runOnce>>, key: string) => r.result?.metrics.find((m) => m.key === key)?.value;

describe('strata bench against llama-server', () => {
  it('learns slots, context and the tokenizer from the server', () => {
    expect(ctx.info).toMatchObject({ slots: SLOTS, slotsSource: 'props', ctxPerSlot: CTX, ctxSource: 'props', ignoreEos: true, tokenizePath: '/tokenize' });
    expect(ctx.sizer.exact).toBe(true);
  });

  it('single: fixed output length, finite TTFT and decode rate', async () => {
    const r = await runOnce(ctx, 'single', 0);
    allCompleted(r);
    expect(value(r, 'single_output_tokens')).toBe(16);
    expect(value(r, 'single_ttft_ms')).toBeGreaterThan(0);
    expect(value(r, 'single_decode_tok_s')).toBeGreaterThan(0);
    expect(r.result!.conditions.tokensCountedBy).toBe('usage');
  });

  it('prefill: reads the size asked for, uncached; skips a size over the context and says so', async () => {
    const r = await runOnce(ctx, 'prefill', 0);
    expect(r.error).toBeNull();
    const sizes = r.result!.conditions.sizes as { target: number; promptTokens: number; cachedTokens: number | null }[];
    expect(sizes).toHaveLength(1);
    expect(Math.abs(sizes[0]!.promptTokens - 256)).toBeLessThanOrEqual(8);
    expect(sizes[0]!.cachedTokens ?? 0).toBeLessThanOrEqual(2);
    expect(value(r, 'prefill_256_tok_s')).toBeGreaterThan(0);
    expect(r.result!.notes.join('\n')).toMatch(/prefill 4096: skipped, over the context per slot \(2048\)/);
  });

  it('concurrent: all clients answered, percentiles ordered', async () => {
    const r = await runOnce(ctx, 'concurrent', 0);
    allCompleted(r);
    expect(r.result!.samples.c3_ttft_ms).toHaveLength(3);
    expect(value(r, 'c3_ttft_p95_ms')!).toBeGreaterThanOrEqual(value(r, 'c3_ttft_p50_ms')!);
    expect(value(r, 'c3_output_tok_s')).toBeGreaterThan(0);
  });

  it('repeat: the continuation reuses most of the conversation (llama-server restores it from its RAM cache)', async () => {
    const r = await runOnce(ctx, 'repeat', 0);
    expect(r.error).toBeNull();
    const c = r.result!.conditions as { conversationTokens: number; reusedTokens: number | null; otherConversations: number };
    expect(c.otherConversations).toBe(SLOTS);
    expect(c.reusedTokens).not.toBeNull();
    expect(c.reusedTokens!).toBeGreaterThan(c.conversationTokens / 2);
    expect(value(r, 'repeat_ttft_ms')).toBeGreaterThan(0);
  });

  it('mixed: short requests timed against the long read', async () => {
    const r = await runOnce(ctx, 'mixed', 0);
    expect(r.error).toBeNull();
    const counted = value(r, 'mixed_shorts_counted')!;
    expect(counted).toBeGreaterThanOrEqual(0);
    expect(counted).toBeLessThanOrEqual(2);
    expect(r.result!.samples.mixed_short_ttft_ms).toHaveLength(counted);
    expect(value(r, 'mixed_long_ttft_ms')).toBeGreaterThan(0);
  });

  it('infill: warm FIM requests through /infill, all answered', async () => {
    const r = await runOnce(ctx, 'infill', 0);
    allCompleted(r);
    expect(r.result!.conditions.path).toBe('/infill');
    expect(r.result!.samples.infill_ms).toHaveLength(3);
    expect(value(r, 'infill_p50_ms')).toBeGreaterThan(0);
  });

  it('typing: a keystroke burst, each aborting the last; prompt tokens from llama-server\'s counter; the final answer as a cold one', async () => {
    const r = await runOnce(ctx, 'typing', 0);
    expect(r.error).toBeNull();
    expect(r.result!.requests.failed).toBe(0);
    expect(value(r, 'typing_prompt_tokens')).toBeGreaterThan(0);
    expect(value(r, 'typing_last_ms')).toBeGreaterThan(0);
    expect(value(r, 'typing_answered')).toBeGreaterThanOrEqual(1);
    expect(value(r, 'typing_final_is_cold')).toBe(1);
  });

  it('session: llama-server\'s slot save and restore, timed, and the continuation after it', async () => {
    const r = await runOnce(ctx, 'session', 0);
    allCompleted(r);
    expect(r.result!.conditions.api).toBe('llama-server');
    expect(r.result!.samples.session_save_ms).toHaveLength(2);
    expect(value(r, 'session_restore_server_ms')).toBeGreaterThan(0);
    expect(value(r, 'session_resume_ttft_ms')).toBeGreaterThan(0);
  });

  it('conversations: users x turns, prompt tokens computed against the minimum', async () => {
    const r = await runOnce(ctx, 'conversations', 0);
    allCompleted(r);
    expect(r.result!.requests.sent).toBe(8);
    const computed = value(r, 'conv_prompt_tokens')!;
    const min = value(r, 'conv_min_prompt_tokens')!;
    expect(min).toBeGreaterThan(0);
    expect(computed).toBeGreaterThanOrEqual(min * 0.9);
    expect(value(r, 'conv_turn2_ttft_ms')).toBeGreaterThan(0);
  });

  it('stops the server and its process group', async () => {
    const pid = server.pid;
    await server.stop();
    expect(server.running).toBe(false);
    expect(() => process.kill(-pid, 0)).toThrow();
  });
});
