#pragma once
#include <napi.h>

namespace strata {
// Registers fitModel (fit_js.cpp).
void InitFit(Napi::Env env, Napi::Object exports);
}
