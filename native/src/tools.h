#pragma once
#include <napi.h>
namespace strata {
// Registers listDevices, rpcServe, makeTestModel, systemInfo (tools.cpp and friends).
void InitTools(Napi::Env env, Napi::Object exports);
// Loads dynamic ggml backends (GPU, CPU variants) once, from the addon's own folder.
void EnsureBackendsLoaded();
}
