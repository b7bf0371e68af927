#pragma once
#include <napi.h>
namespace strata {
// Registers the Engine class (engine_wrap.cpp).
void InitEngine(Napi::Env env, Napi::Object exports);
}
