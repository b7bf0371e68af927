#pragma once
// ggml backends and devices shared by the tools (listDevices, rpcServe) and the Engine:
// dynamic backend loading (which CPU variant, which GPU backend libraries) and RPC endpoints.
// Any thread; the load and the RPC bookkeeping are guarded by mutexes.
#include <string>
#include <vector>

#include "ggml-backend.h"

namespace strata {

// One of ggml's CPU variant libraries (libggml-cpu-<name>.so) beside the addon.
struct CpuVariantDesc {
  std::string name;  // "haswell", "zen4", "sapphirerapids", …
  std::string path;
  int score = 0;     // ggml's own score for this CPU; 0 = the CPU lacks a feature it needs
  bool amx = false;  // built with AMX kernels (sapphirerapids)
};

struct BackendLoadOptions {
  // "auto": ggml's best score; else a variant name. A build without variants accepts only "auto".
  std::string cpu_variant = "auto";
  // Folders of other backend libraries (installed GPU backends), tried after the addon's own
  // folder; of two libraries with the same file name the first that loads wins.
  std::vector<std::string> dirs;
};

struct BackendLoadReport {
  std::string cpu_variant;                    // loaded variant; "" in a build without variants
  std::vector<CpuVariantDesc> cpu_variants;   // best score first
  struct Loaded { std::string name, path; };
  struct Failed { std::string path, error; };
  std::vector<Loaded> loaded;                 // backend registries added (CPU variant included)
  std::vector<Failed> failed;                 // libraries that did not load, with the loader's reason
};

// The CPU variant libraries beside the addon, scored for this CPU, best first (loads nothing).
std::vector<CpuVariantDesc> ListCpuVariants();

// Loads ggml's dynamic backends once per process. A later call with other options throws
// std::runtime_error (ggml cannot unload a backend), as does an unknown or unsupported variant.
const BackendLoadReport & LoadBackends(const BackendLoadOptions & opts);

// LoadBackends with default options unless backends are loaded already.
void EnsureBackendsLoaded();

// What the last LoadBackends did (empty before it).
BackendLoadReport BackendReport();

// Adds ggml RPC servers ("host:port") as devices (RPC0, RPC1, … in the order first added) and
// returns the devices of `endpoints`, in order. Each endpoint new to this process is probed first
// (TCP connect + RPC HELLO, each with a timeout), because ggml aborts the process when a server is
// unreachable and hangs when it is busy with another client. Throws std::runtime_error naming the
// endpoint; endpoints added before the failing one stay added (ggml cannot remove them).
std::vector<ggml_backend_dev_t> AddRpcServers(const std::vector<std::string> & endpoints);

// Batch-invariant CPU kernels (native/patches/0002): a row's numbers then do not depend on how
// many rows share its op (see ggml_cpu_deterministic there). Process-wide and sticky: once an
// engine asks for it, every later compute in the process runs that way. `mask` 0 asks for every
// bit; STRATA_CPU_DETERMINISTIC_MASK (1 sgemm for one row too, 2 reference flash attention, 4 no
// IQ panel GEMM) overrides it, to measure the bits apart. Returns the mask set; throws when the
// loaded CPU library lacks the switch (a ggml built without the patch).
int SetCpuDeterministic(int mask);

// "cpu" | "gpu" | "igpu" | "accel" (DeviceInfo.type in addon.d.ts).
const char * DeviceTypeName(enum ggml_backend_dev_type type);

// Splits "host:port"; false when malformed (empty host, port not in 1..65535).
bool ParseEndpoint(const std::string & endpoint, std::string & host, int & port);

}  // namespace strata
