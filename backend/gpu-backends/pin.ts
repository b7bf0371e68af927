// The prebuilt GPU backends Strata installs: node-llama-cpp's platform packages of the same
// release whose git bundle the native build compiles (native/pin.json, read by
// scripts/build-native.mjs too). A backend library only loads into a ggml built from the same
// source, so each entry names the llama.cpp commit it was built from; checkPin() refuses a pin
// whose backends do not match the source pin (a moved LLAMA_COMMIT must move them too).
import pinFile from '../../native/pin.json' with { type: 'json' };

export const GPU_BACKEND_KINDS = ['vulkan', 'cuda', 'cuda-ext'] as const;
export type GpuBackendKind = (typeof GPU_BACKEND_KINDS)[number];

export interface GpuBackendPin {
  /** npm package, e.g. "@node-llama-cpp/linux-x64-vulkan". */
  package: string;
  version: string;
  /** llama.cpp commit the package's libraries were built from. */
  llamaCommit: string;
  /** The registry's dist.integrity of the tarball (SRI, sha512). */
  integrity: string;
  tarballBytes: number;
  /** Path of the backend library inside the tarball. */
  file: string;
  /** File name it is installed under (the name ggml's loader and the engine know it by). */
  library: string;
  /** sha256 (hex) of the library. */
  sha256: string;
  /** Shared libraries it needs at run time besides ggml and the C/C++ runtime (its DT_NEEDED). */
  needs: string[];
}

export interface Pin {
  nodeLlamaCpp: string;
  llamaCommit: string;
  llamaRelease: string;
  gpuBackends: Record<GpuBackendKind, GpuBackendPin>;
}

export const PIN: Pin = pinFile as Pin;

export function isGpuBackendKind(s: string): s is GpuBackendKind {
  return (GPU_BACKEND_KINDS as readonly string[]).includes(s);
}

/** Problems of a pin (empty when sound): backends built from another source, or malformed entries. */
export function pinProblems(pin: Pin): string[] {
  const out: string[] = [];
  for (const kind of GPU_BACKEND_KINDS) {
    const b = pin.gpuBackends?.[kind];
    if (!b) { out.push(`gpuBackends.${kind} is missing`); continue; }
    if (b.llamaCommit !== pin.llamaCommit) {
      out.push(`gpuBackends.${kind} was built from llama.cpp ${b.llamaCommit.slice(0, 12)}, the engine from ${pin.llamaCommit.slice(0, 12)}: pin the ${b.package} release built from the same source`);
    }
    if (b.version !== pin.nodeLlamaCpp) {
      out.push(`gpuBackends.${kind} is ${b.package}@${b.version}, the source comes from node-llama-cpp@${pin.nodeLlamaCpp}`);
    }
    if (!/^sha512-[A-Za-z0-9+/]{86}==$/.test(b.integrity)) out.push(`gpuBackends.${kind}.integrity is not a sha512 SRI string`);
    if (!/^[0-9a-f]{64}$/.test(b.sha256)) out.push(`gpuBackends.${kind}.sha256 is not 64 hex digits`);
    if (!b.file.startsWith('package/') || b.file.includes('..') || !b.file.endsWith(`/${b.library}`)) {
      out.push(`gpuBackends.${kind}.file must be package/…/${b.library}`);
    }
    if (!/^libggml-[a-z0-9]+\.so$/.test(b.library)) out.push(`gpuBackends.${kind}.library must be libggml-<name>.so`);
  }
  return out;
}

/** Throws when the pin is unsound (see pinProblems). */
export function checkPin(pin: Pin = PIN): Pin {
  const problems = pinProblems(pin);
  if (problems.length > 0) throw new Error(`native/pin.json: ${problems.join('; ')}`);
  return pin;
}
