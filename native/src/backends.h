#pragma once
// ggml backends and devices shared by the tools (listDevices, rpcServe) and the Engine:
// dynamic backend loading (EnsureBackendsLoaded, declared in tools.h) and RPC endpoints.
// Any thread; the RPC bookkeeping is guarded by a mutex.
#include <string>
#include <vector>

#include "ggml-backend.h"

namespace strata {

// Adds ggml RPC servers ("host:port") as devices (RPC0, RPC1, … in the order first added) and
// returns the devices of `endpoints`, in order. Each endpoint new to this process is probed first
// (TCP connect + RPC HELLO, each with a timeout), because ggml aborts the process when a server is
// unreachable and hangs when it is busy with another client. Throws std::runtime_error naming the
// endpoint; endpoints added before the failing one stay added (ggml cannot remove them).
std::vector<ggml_backend_dev_t> AddRpcServers(const std::vector<std::string> & endpoints);

// "cpu" | "gpu" | "igpu" | "accel" (DeviceInfo.type in addon.d.ts).
const char * DeviceTypeName(enum ggml_backend_dev_type type);

// Splits "host:port"; false when malformed (empty host, port not in 1..65535).
bool ParseEndpoint(const std::string & endpoint, std::string & host, int & port);

}  // namespace strata
