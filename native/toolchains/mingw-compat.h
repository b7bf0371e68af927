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
