/* Forced into every MinGW-w64 compile (native/toolchains/win32-x64.cmake): what Debian 12's
 * MinGW-w64 10 headers lack and the pinned ggml uses (the thread power-throttling hint, Windows 8+). */
#pragma once
#include <_mingw.h>
#if defined(__MINGW64_VERSION_MAJOR) && __MINGW64_VERSION_MAJOR <= 10
typedef struct _THREAD_POWER_THROTTLING_STATE {
  unsigned long Version;
  unsigned long ControlMask;
  unsigned long StateMask;
} THREAD_POWER_THROTTLING_STATE;
#define THREAD_POWER_THROTTLING_CURRENT_VERSION 1
#define THREAD_POWER_THROTTLING_EXECUTION_SPEED 0x1
#endif

/* GCC 12's AMX tile intrinsics pass the stride as `long`, which is 32 bits on Windows, so the
 * assembler gets a 32-bit index register ("(%rax,%edi,1) is not a valid base/index expression")
 * and the sapphirerapids CPU variant does not build (later GCCs pass a 64-bit integer). Where
 * AMX is on (that variant's files only), the same three instructions with a 64-bit stride. */
#if defined(__AMX_TILE__) && defined(__x86_64__)
#include <immintrin.h>
#undef _tile_loadd_internal
#undef _tile_stream_loadd_internal
#undef _tile_stored_internal
#define _tile_loadd_internal(dst, base, stride) \
  __asm__ volatile("{tileloadd\t(%0,%1,1), %%tmm" #dst "|tileloadd\t%%tmm" #dst ", [%0+%1*1]}" \
                   :: "r"((const void *)(base)), "r"((long long)(stride)))
#define _tile_stream_loadd_internal(dst, base, stride) \
  __asm__ volatile("{tileloaddt1\t(%0,%1,1), %%tmm" #dst "|tileloaddt1\t%%tmm" #dst ", [%0+%1*1]}" \
                   :: "r"((const void *)(base)), "r"((long long)(stride)))
#define _tile_stored_internal(src, base, stride) \
  __asm__ volatile("{tilestored\t%%tmm" #src ", (%0,%1,1)|tilestored\t[%0+%1*1], %%tmm" #src "}" \
                   :: "r"((void *)(base)), "r"((long long)(stride)) : "memory")
#endif
