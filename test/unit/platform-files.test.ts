// Files and folders whose names depend on the platform, Windows' run on any machine: ggml's
// backend libraries (.so; .dll with or without MinGW's "lib"), the server's data folders
// (%LOCALAPPDATA% on Windows), and the GPU backend packages, which are Linux builds.
import { describe, expect, it } from 'vitest';
import { gpuBackendFiles } from '../../backend/engine/fit-probe.js';
import { defaultResponsesDir, defaultSessionsDir } from '../../backend/app/serve-options.js';
import { installBackend } from '../../backend/gpu-backends/install.js';
import { expandHome, samePath } from '../../common/os/paths.js';

const FILES = ['libggml-base.so', 'libggml-cpu-haswell.so', 'libggml-cpu.so', 'libggml-rpc.so', 'libggml-vulkan.so', 'libggml-cuda.so', 'strata.node',
  'libggml-base.dll', 'ggml-cpu-zen4.dll', 'libggml-vulkan.dll', 'ggml-cuda.dll', 'GGML-RPC.DLL', 'libggml-Vulkan.DLL', 'libllama.dll'];

describe('ggml backend libraries', () => {
  it('Linux: libggml-NAME.so that offload (not cpu, base, rpc or a CPU variant)', () => {
    expect(gpuBackendFiles(FILES, 'linux')).toEqual(['libggml-vulkan.so', 'libggml-cuda.so']);
  });
  it('Windows: NAME.dll with or without "lib", in any case', () => {
    expect(gpuBackendFiles(FILES, 'win32')).toEqual(['libggml-vulkan.dll', 'ggml-cuda.dll', 'libggml-Vulkan.DLL']);
  });
});

describe('the server\'s data folders', () => {
  it('Windows: under %LOCALAPPDATA%, else the profile\'s AppData\\Local, with backslashes', () => {
    expect(defaultSessionsDir({ LOCALAPPDATA: 'C:\\Users\\Ana\\AppData\\Local' }, 'win32')).toBe('C:\\Users\\Ana\\AppData\\Local\\strata\\sessions');
    expect(defaultResponsesDir({ LOCALAPPDATA: 'D:/Profiles/ana/Local/' }, 'win32')).toBe('D:\\Profiles\\ana\\Local\\strata\\responses');
    expect(defaultSessionsDir({ USERPROFILE: 'C:\\Users\\Ana' }, 'win32')).toBe('C:\\Users\\Ana\\AppData\\Local\\strata\\sessions');
  });
  it('Linux: $XDG_DATA_HOME, else ~/.local/share', () => {
    expect(defaultSessionsDir({ XDG_DATA_HOME: '/data' }, 'linux')).toBe('/data/strata/sessions');
    expect(defaultSessionsDir({}, 'linux')).toMatch(/\/\.local\/share\/strata\/sessions$/);
  });
});

describe('GPU backend packages', () => {
  it('are refused on Windows with a message naming why, before anything is fetched', async () => {
    await expect(installBackend('vulkan', { platform: 'win32', registry: 'http://127.0.0.1:9' })).rejects.toThrow(
      /^@node-llama-cpp\/linux-x64-vulkan is a Linux build \(libggml-vulkan\.so\); there is no prebuilt vulkan backend for win32: the engine runs on the CPU there$/);
  });
});

describe('samePath', () => {
  it('Windows: one file whatever the case and separators (VS Code writes c:\\, a real path C:\\)', () => {
    expect(samePath('c:\\Users\\Ana\\proj\\a.ts', 'C:\\Users\\Ana\\proj\\a.ts', 'win32')).toBe(true);
    expect(samePath('C:/Models/Qwen.GGUF', 'c:\\models\\qwen.gguf', 'win32')).toBe(true);
    expect(samePath('C:\\models\\x\\..\\a.gguf', 'C:\\models\\a.gguf', 'win32')).toBe(true);
    expect(samePath('C:\\models\\a.gguf', 'D:\\models\\a.gguf', 'win32')).toBe(false);
    expect(samePath('C:\\models\\a.gguf', 'C:\\models\\a.gguf.part', 'win32')).toBe(false);
  });
  it('Linux: the strings themselves', () => {
    expect(samePath('/m/a.gguf', '/m/a.gguf', 'linux')).toBe(true);
    expect(samePath('/m/A.gguf', '/m/a.gguf', 'linux')).toBe(false);
  });
});

describe('expandHome', () => {
  it('Windows: "~", "~/" and "~\\" start at the profile folder', () => {
    expect(expandHome('~\\models\\a.gguf', 'C:\\Users\\Ana', 'win32')).toBe('C:\\Users\\Ana\\models\\a.gguf');
    expect(expandHome('~/models/a.gguf', 'C:\\Users\\Ana', 'win32')).toBe('C:\\Users\\Ana/models/a.gguf');
    expect(expandHome('~', 'C:\\Users\\Ana', 'win32')).toBe('C:\\Users\\Ana');
    expect(expandHome('C:\\~x\\a.gguf', 'C:\\Users\\Ana', 'win32')).toBe('C:\\~x\\a.gguf');
  });
  it('Linux: "~" and "~/" only ("~\\x" is a file name there)', () => {
    expect(expandHome('~/m/a.gguf', '/home/ana', 'linux')).toBe('/home/ana/m/a.gguf');
    expect(expandHome('~\\m', '/home/ana', 'linux')).toBe('~\\m');
    expect(expandHome('~ana/m', '/home/ana', 'linux')).toBe('~ana/m');
  });
});
