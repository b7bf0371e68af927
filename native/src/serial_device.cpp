#include "serial_device.h"

#include <atomic>
#include <cstring>

namespace strata {

namespace {

std::atomic<bool> g_serial{false};
std::mutex g_compute;

}  // namespace

void NoteSerialDevices(const std::vector<ggml_backend_dev_t>& devs) {
  for (ggml_backend_dev_t dev : devs) {
    const char* desc = dev ? ggml_backend_dev_description(dev) : nullptr;
    if (desc && std::strstr(desc, "llvmpipe")) g_serial = true;
  }
}

bool SerialDevice() { return g_serial; }

std::unique_lock<std::mutex> SerialCompute() {
  return g_serial ? std::unique_lock<std::mutex>(g_compute) : std::unique_lock<std::mutex>();
}

int32_t DecodeAlone(llama_context* ctx, const llama_batch& batch) {
  std::unique_lock<std::mutex> serial = SerialCompute();
  const int32_t rc = llama_decode(ctx, batch);
  llama_synchronize(ctx);
  return rc;
}

}  // namespace strata
