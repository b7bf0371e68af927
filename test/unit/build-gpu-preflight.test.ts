// `STRATA_GPU=vulkan|cuda npm install` builds a ggml GPU backend from source: before CMake runs,
// the build names every SDK piece that is missing (with its Debian package), instead of failing
// minutes into the build; with everything there it has nothing to say.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../backend/addon/loader.js';

type Problems = (gpu: string, env: Record<string, string>, exists: (p: string) => boolean, hasCommand: (c: string) => boolean) => string[];
const script: string = join(packageRoot, 'scripts', 'build-native.mjs');
const { gpuBuildProblems } = await import(script) as { gpuBuildProblems: Problems };

describe('GPU source build preflight', () => {
  it('names glslc, the Vulkan headers and SPIRV-Headers when they are missing', () => {
    expect(gpuBuildProblems('vulkan', {}, () => false, () => false)).toEqual([
      'glslc, the shader compiler (Debian: apt install glslc)',
      'the Vulkan headers and loader library (Debian: apt install libvulkan-dev)',
      'SPIRV-Headers with its CMake config (Debian: apt install spirv-headers)',
    ]);
    const debian = new Set(['/usr/include/vulkan/vulkan.h', '/usr/share/cmake/SPIRV-Headers']);
    expect(gpuBuildProblems('vulkan', {}, (p) => debian.has(p), (c) => c === 'glslc')).toEqual([]);
    // A LunarG SDK instead of system packages.
    const sdk = new Set(['/sdk/bin/glslc', '/sdk/include/vulkan/vulkan.h', '/sdk/share/cmake/SPIRV-Headers']);
    expect(gpuBuildProblems('vulkan', { VULKAN_SDK: '/sdk' }, (p) => sdk.has(p), () => false)).toEqual([]);
  });

  it('names nvcc and cuBLAS for CUDA (nvcc alone is not enough)', () => {
    expect(gpuBuildProblems('cuda', { CUDACXX: '/nope/nvcc' }, () => false, () => false)).toEqual([
      'nvcc, the CUDA compiler (the CUDA toolkit: https://developer.nvidia.com/cuda-downloads; or set CUDACXX)',
      "cuBLAS headers and libraries (cublas_v2.h; NVIDIA's libcublas-dev-<version> package of the same CUDA version)",
    ]);
    expect(gpuBuildProblems('cuda', {}, (p) => p === '/usr/local/cuda/bin/nvcc', () => false)).toHaveLength(1);
    expect(gpuBuildProblems('cuda', { CUDA_PATH: '/opt/cuda' }, (p) => p === '/opt/cuda/include/cublas_v2.h', (c) => c === 'nvcc')).toEqual([]);
    expect(gpuBuildProblems('', {}, () => false, () => false)).toEqual([]);
  });
});
