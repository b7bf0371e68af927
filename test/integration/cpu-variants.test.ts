// What ships runs on any x86-64 CPU: the addon and llama.cpp libraries beside it carry no
// instruction beyond baseline x86-64 (only the per-CPU variant libraries do, and ggml loads the
// one this CPU supports), and the server answers chat, completion and infill with a 60-token
// prompt on q8_0 and q4_0 weights both on the variant it picks and forced to a variant below this
// machine's (haswell: AVX2, no AVX-512, no AMX).
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAddon, packageRoot } from '../../backend/addon/loader.js';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, startServer, type Running } from './server-helpers.js';

const buildDir = join(packageRoot, 'native', 'build');
const variants = loadAddon().cpuVariants();
const portable = variants.length > 0;

/** How many instructions of `f` use AVX (ymm), AVX-512 (zmm) or AMX (tmm) registers. */
function wideRegisters(f: string): { ymm: number; zmm: number; tmm: number } {
  const asm = execFileSync('objdump', ['-d', '--no-show-raw-insn', join(buildDir, f)], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const count = (re: RegExp) => asm.match(re)?.length ?? 0;
  return { ymm: count(/%ymm\d/g), zmm: count(/%zmm\d/g), tmm: count(/%tmm\d/g) };
}

describe.skipIf(!portable)('portable build', () => {
  it('ships no AVX, AVX-512 or AMX code outside the CPU variant libraries', () => {
    const shipped = readdirSync(buildDir).filter((f) => f.endsWith('.node') || (/^lib.*\.so$/.test(f) && !f.startsWith('libggml-cpu-')));
    expect(shipped).toEqual(expect.arrayContaining(['strata.node', 'libllama.so', 'libggml.so', 'libggml-base.so']));
    for (const f of [...shipped, 'libggml-cpu-x64.so']) expect({ f, ...wideRegisters(f) }).toEqual({ f, ymm: 0, zmm: 0, tmm: 0 });
    // The variants carry what their names promise, so loading one the CPU lacks is what would fault.
    expect(wideRegisters('libggml-cpu-haswell.so')).toMatchObject({ zmm: 0, tmm: 0 });
    expect(wideRegisters('libggml-cpu-haswell.so').ymm).toBeGreaterThan(0);
    expect(wideRegisters('libggml-cpu-sapphirerapids.so').tmm).toBeGreaterThan(0);
  });
});

const haswellHere = variants.some((v) => v.name === 'haswell' && v.score > 0);
const prompt = Array.from({ length: 60 }, (_, i) => `tok${i}`).join(' ');

describe.each([
  ['auto', 'q8_0'], ['auto', 'q4_0'], ['haswell', 'q8_0'], ['haswell', 'q4_0'],
] as const)('cpu variant %s, %s weights', (variant, quant) => {
  let server: Running | undefined;
  afterAll(async () => { await server?.close(); });

  it.skipIf(variant === 'haswell' && !haswellHere)('answers chat, completion and infill with a 60-token prompt', async () => {
    server = await startServer(await ensureTestModel({ vocab: 'starcoder', quant }), { cpuVariant: variant });
    const devices = await json(server.port, 'GET', '/v1/devices');
    if (variant !== 'auto') expect(devices.body.cpu.variant).toBe(variant);
    expect(devices.body.data[0].cpu.variant).toBe(devices.body.cpu.variant);

    const completion = await server.openai.completions.create({ model: 'm', prompt, ...greedy(4) });
    expect(completion.usage).toMatchObject({ completion_tokens: 4 });
    expect(completion.usage!.prompt_tokens).toBeGreaterThanOrEqual(60);
    const chat = await server.openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: prompt }], ...greedy(4) });
    expect(chat.usage).toMatchObject({ completion_tokens: 4 });
    const infill = await json(server.port, 'POST', '/v1/infill', { input_prefix: `${prompt}\n`, input_suffix: '\n}', max_tokens: 4, temperature: 0 });
    expect(infill.status).toBe(200);
    expect(infill.body.tokens_predicted ?? infill.body.usage?.completion_tokens).toBe(4);
  });
});
