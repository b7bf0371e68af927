// Mesa's lavapipe (Vulkan on the CPU; 22.3 in Debian 12) can corrupt memory when a shader pipeline
// compiles while its queue thread runs other work (valgrind: the queue thread reads LLVM blocks a
// compile on another thread just freed). ggml-vulkan compiles a pipeline the first time a graph
// needs it, and other work may be in flight then: another context's (the head's graph after the
// model's) or another engine's in the same process. With such a device, every graph of the process
// runs alone: its compute under one lock, finished before the lock is released. Other devices: no
// lock, no extra waits.
#pragma once
#include <mutex>
#include <vector>

#include "ggml-backend.h"
#include "llama.h"

namespace strata {

// Turns the serial mode on for this process when one of `devs` is lavapipe (it stays on).
void NoteSerialDevices(const std::vector<ggml_backend_dev_t>& devs);
bool SerialDevice();
// Held across a graph's compute and its synchronize; owns no lock unless the serial mode is on.
std::unique_lock<std::mutex> SerialCompute();
// llama_decode, then llama_synchronize, under SerialCompute: llama_decode's code.
int32_t DecodeAlone(llama_context* ctx, const llama_batch& batch);

}  // namespace strata
