#pragma once
#include <napi.h>

#include "backends.h"
namespace strata {
// Registers listDevices, rpcServe, makeTestModel, systemInfo, cpuVariants, loadBackends (tools.cpp).
void InitTools(Napi::Env env, Napi::Object exports);
// BackendReport of addon.d.ts.
Napi::Object BackendReportToJs(Napi::Env env, const BackendLoadReport & r);
}
