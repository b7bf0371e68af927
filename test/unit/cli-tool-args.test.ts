// Argument checking of the tool subcommands: make-test-model, devices, rpc-server.
import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../../backend/args/args.js';
import { parseDevicesArgs } from '../../backend/cli/devices.js';
import { parseMakeTestModelArgs } from '../../backend/cli/make-test-model.js';
import { isLoopback, parseRpcServerArgs } from '../../backend/cli/rpc-server.js';

const usage = (fn: () => unknown, message: RegExp): void => {
  expect(fn).toThrow(UsageError);
  expect(fn).toThrow(message);
};

describe('make-test-model arguments', () => {
  const parse = (...argv: string[]) => parseMakeTestModelArgs(parseArgs(argv));

  it('applies defaults and resolves --out', () => {
    const o = parse('--out', 'model.gguf');
    expect(o).toMatchObject({ vocab: 'qwen2', shape: 'tiny', quant: 'f16', seed: 1 });
    expect(o.out).toBe(`${process.cwd()}/model.gguf`);
    expect(parse('--out=/tmp/m.gguf', '--vocab', 'starcoder', '--shape', '0.5b', '--quant', 'q4_0', '--seed', '42'))
      .toEqual({ out: '/tmp/m.gguf', vocab: 'starcoder', shape: '0.5b', quant: 'q4_0', seed: 42 });
    expect(parse('--out', 'm.gguf', '--ctx-train', '32768').ctxTrain).toBe(32_768);
  });

  it('names what is wrong', () => {
    usage(() => parse(), /--out FILE is required/);
    usage(() => parse('--out'), /--out FILE is required/);
    usage(() => parse('--out', 'm.gguf', '--shape', '70b'), /--shape must be one of tiny, 0.5b, 7b, embed-bert, embed-causal, rerank-bert, copy, copy-0.5b, mtp, copy-mtp, hybrid, eagle3, dflash, dspark, got '70b'/);
    usage(() => parse('--out', 'm.gguf', '--quant', 'q5_k'), /--quant must be one of f32, f16, q8_0, q4_0, got 'q5_k'/);
    usage(() => parse('--out', 'm.gguf', '--seed', '-3'), /--seed must be an integer/);
    usage(() => parse('--out', 'm.gguf', '--seed', 'abc'), /--seed must be an integer/);
    usage(() => parse('--out', 'm.gguf', '--vocab'), /--vocab needs a name or a path/);
    usage(() => parse('--out', 'm.gguf', '--ctx-train', '8'), /--ctx-train must be an integer/);
    usage(() => parse('--out', 'm.gguf', '--size', 'big'), /unknown option --size/);
    usage(() => parse('--out', 'm.gguf', 'extra'), /unexpected argument 'extra'/);
  });
});

describe('devices arguments', () => {
  const parse = (...argv: string[]) => parseDevicesArgs(parseArgs(argv));

  it('splits --rpc and reads --json', () => {
    expect(parse()).toEqual({ rpc: [], json: false });
    expect(parse('--rpc', '127.0.0.1:50052, box:9', '--json')).toEqual({ rpc: ['127.0.0.1:50052', 'box:9'], json: true });
  });

  it('names what is wrong', () => {
    usage(() => parse('--rpc'), /--rpc needs HOST:PORT/);
    usage(() => parse('--rpc', 'nohost'), /--rpc endpoint 'nohost' is not HOST:PORT/);
    usage(() => parse('--rpc', 'h:70000'), /--rpc endpoint 'h:70000' is not HOST:PORT/);
    usage(() => parse('--json=yes'), /--json takes no value/);
    usage(() => parse('--gpu'), /unknown option --gpu/);
  });
});

describe('rpc-server arguments', () => {
  const parse = (...argv: string[]) => parseRpcServerArgs(parseArgs(argv));

  it('listens on loopback by default', () => {
    expect(parse('--port', '50052', '--threads', '3')).toEqual({ host: '127.0.0.1', port: 50052, threads: 3, allowRemote: false });
    expect(parse('--port', '1', '--host', 'localhost').host).toBe('127.0.0.1');
    expect(parse('--port', '1').threads).toBeGreaterThan(0);
  });

  it('refuses a non-loopback host unless --allow-remote', () => {
    usage(() => parse('--port', '50052', '--host', '0.0.0.0'), /refusing to listen on 0\.0\.0\.0: rpc-server is unauthenticated.*--allow-remote/);
    expect(parse('--port', '50052', '--host', '192.168.1.5', '--allow-remote').allowRemote).toBe(true);
    expect(isLoopback('127.0.0.2')).toBe(true);
    expect(isLoopback('10.0.0.1')).toBe(false);
  });

  it('names what is wrong', () => {
    usage(() => parse(), /--port PORT is required/);
    usage(() => parse('--port', '0'), /--port must be an integer in \[1, 65535\]/);
    usage(() => parse('--port', '80', '--threads', '0'), /--threads must be an integer in \[1, 1024\]/);
    usage(() => parse('--port', '80', '--host', 'example.com'), /--host must be an IPv4 address/);
    usage(() => parse('--port', '80', '--host', '::1'), /--host must be an IPv4 address/);
    usage(() => parse('--port', '80', '--cache'), /unknown option --cache/);
  });
});
