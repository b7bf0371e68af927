// The one llama.h name the pure policy files use (slot_picker), so their unit tests build
// without llama.cpp (test/unit/native-slot-picker.test.ts).
#pragma once
#include <cstdint>

typedef int32_t llama_token;
