// `strata rpc-server`: a ggml RPC server from this build, so that other Strata engines can use
// this machine's GPUs (or CPU) as a device; two local ones make a two-device machine for tests.
// The protocol is unauthenticated: loopback only unless --allow-remote.
import { availableParallelism } from 'node:os';
import { isIPv4 } from 'node:net';
import { loadAddon } from '../addon/loader.js';
import { optInt, optString, UsageError, type ParsedArgs } from '../args/args.js';
import { optFlag, rejectUnknownOptions, runCommand } from '../args/command-usage.js';

const USAGE = `usage: strata rpc-server --port PORT [--host 127.0.0.1] [--threads N] [--allow-remote]
  --host          IPv4 address to listen on (default 127.0.0.1; "localhost" means 127.0.0.1)
  --port          TCP port
  --threads       CPU threads for the computation (default: all cores)
  --allow-remote  permit a non-loopback host. The RPC protocol has no authentication: anyone who
                  can reach the port can run computations and read memory. Trusted networks only.`;

export interface RpcServerArgs { host: string; port: number; threads: number; allowRemote: boolean }

export function isLoopback(host: string): boolean {
  return isIPv4(host) && host.startsWith('127.');
}

export function parseRpcServerArgs(args: ParsedArgs): RpcServerArgs {
  rejectUnknownOptions(args, ['host', 'port', 'threads', 'allow-remote', 'help']);
  let host = optString(args, 'host') ?? '127.0.0.1';
  if (host === 'localhost') host = '127.0.0.1';
  if (!isIPv4(host)) throw new UsageError(`--host must be an IPv4 address (ggml RPC listens on IPv4 only), got '${host}'`);
  const port = optInt(args, 'port', 1, 65535);
  if (port === undefined) throw new UsageError('--port PORT is required');
  const threads = optInt(args, 'threads', 1, 1024) ?? availableParallelism();
  const allowRemote = optFlag(args, 'allow-remote');
  if (!isLoopback(host) && !allowRemote) {
    throw new UsageError(`refusing to listen on ${host}: rpc-server is unauthenticated; pass --allow-remote to serve a trusted network`);
  }
  return { host, port, threads, allowRemote };
}

export const command = {
  summary: 'serve this machine\'s devices to other engines over ggml RPC (unauthenticated)',
  run: (args: ParsedArgs): Promise<number> => runCommand('rpc-server', USAGE, args, async () => {
    const o = parseRpcServerArgs(args);
    if (!isLoopback(o.host)) {
      process.stderr.write(`strata rpc-server: WARNING: listening on ${o.host}:${o.port} without authentication; ` +
        'anyone who can reach this port can use this machine\'s devices and memory. Trusted networks only.\n');
    }
    const addon = loadAddon();
    const served = addon.listDevices().filter((d) => d.type === 'gpu' || d.type === 'igpu');
    const names = (served.length ? served : addon.listDevices().filter((d) => d.type === 'cpu')).map((d) => d.name);
    process.stderr.write(`strata rpc-server: serving ${names.join(', ')} on ${o.host}:${o.port} with ${o.threads} threads (pid ${process.pid})\n`);
    // Blocks this thread for the life of the process; returns only by throwing (port taken…).
    addon.rpcServe(o.host, o.port, o.threads);
    return 1;
  }),
};
