// Dynamic backend loading and ggml RPC endpoints (see backends.h).
#include "backends.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "ggml-rpc.h"
#include "tools.h"

namespace strata {

namespace {

// Folder of this .node file: dynamic backends (libggml-cuda.so, libggml-cpu-*.so) are copied
// beside it by scripts/build-native.mjs.
std::string AddonFolder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&AddonFolder), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string path = info.dli_fname;
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// Wire format of ggml-rpc's HELLO (ggml-rpc.cpp, pinned source): request = cmd byte 14,
// u64 size, conn_caps[24]; response = u64 size, {major, minor, patch, pad, conn_caps[24]}.
constexpr uint8_t kRpcCmdHello = 14;
constexpr size_t kRpcConnCapsSize = 24;
constexpr int kConnectTimeoutMs = 3000;
constexpr int kHelloTimeoutMs = 5000;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) close(fd_); }
  Fd(const Fd &) = delete;
  Fd & operator=(const Fd &) = delete;
  int get() const { return fd_; }
 private:
  int fd_;
};

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Sends or receives exactly `size` bytes before `deadline`; false on timeout, error or EOF.
bool TransferAll(int fd, void * buf, size_t size, bool sending, std::chrono::steady_clock::time_point deadline) {
  auto * p = static_cast<uint8_t *>(buf);
  while (size > 0) {
    pollfd pfd{fd, static_cast<short>(sending ? POLLOUT : POLLIN), 0};
    const int ready = poll(&pfd, 1, RemainingMs(deadline));
    if (ready <= 0) return false;
    const ssize_t n = sending ? send(fd, p, size, MSG_NOSIGNAL) : recv(fd, p, size, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Connects and exchanges HELLO so that an unreachable, busy or foreign server becomes an
// exception here instead of an abort (or a hang) inside ggml.
void ProbeRpcServer(const std::string & endpoint) {
  std::string host;
  int port = 0;
  if (!ParseEndpoint(endpoint, host, port)) {
    throw std::runtime_error("invalid RPC endpoint '" + endpoint + "': expected host:port with a port in 1..65535");
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;  // ggml-rpc speaks IPv4 only
  hints.ai_socktype = SOCK_STREAM;
  addrinfo * res = nullptr;
  const int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (gai != 0 || res == nullptr) {
    throw std::runtime_error("RPC server " + endpoint + ": cannot resolve host '" + host + "': " + gai_strerror(gai));
  }
  sockaddr_in addr{};
  std::memcpy(&addr, res->ai_addr, sizeof(addr));
  freeaddrinfo(res);

  Fd sock(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) throw std::runtime_error("RPC server " + endpoint + ": socket(): " + std::strerror(errno));
  const auto connect_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kConnectTimeoutMs);
  if (connect(sock.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0) {
    if (errno != EINPROGRESS) {
      throw std::runtime_error("RPC server " + endpoint + " is unreachable: " + std::strerror(errno));
    }
    pollfd pfd{sock.get(), POLLOUT, 0};
    if (poll(&pfd, 1, RemainingMs(connect_deadline)) <= 0) {
      throw std::runtime_error("RPC server " + endpoint + " is unreachable: connect timed out after " +
                               std::to_string(kConnectTimeoutMs) + " ms");
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(sock.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) throw std::runtime_error("RPC server " + endpoint + " is unreachable: " + std::strerror(err));
  }

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kHelloTimeoutMs);
  uint8_t request[1 + 8 + kRpcConnCapsSize] = {};
  request[0] = kRpcCmdHello;
  const uint64_t request_size = kRpcConnCapsSize;
  std::memcpy(request + 1, &request_size, sizeof(request_size));
  uint64_t response_size = 0;
  uint8_t version[4 + kRpcConnCapsSize] = {};
  const bool answered = TransferAll(sock.get(), request, sizeof(request), true, deadline) &&
                        TransferAll(sock.get(), &response_size, sizeof(response_size), false, deadline);
  if (!answered) {
    throw std::runtime_error("RPC server " + endpoint + " did not answer the handshake within " +
                             std::to_string(kHelloTimeoutMs) + " ms (not a ggml rpc-server, or busy with another client)");
  }
  if (response_size != sizeof(version) || !TransferAll(sock.get(), version, sizeof(version), false, deadline)) {
    throw std::runtime_error("RPC server " + endpoint + " answered the handshake with an unexpected message (another ggml RPC protocol version?)");
  }
  if (version[0] != RPC_PROTO_MAJOR_VERSION || version[1] > RPC_PROTO_MINOR_VERSION) {
    throw std::runtime_error("RPC server " + endpoint + " speaks RPC protocol " + std::to_string(version[0]) + "." +
                             std::to_string(version[1]) + "." + std::to_string(version[2]) + "; this build needs " +
                             std::to_string(RPC_PROTO_MAJOR_VERSION) + "." + std::to_string(RPC_PROTO_MINOR_VERSION) + ".x");
  }
}

std::mutex g_rpc_mutex;
// Endpoint -> its registry, once added: ggml keeps one registry per endpoint for the process.
std::map<std::string, ggml_backend_reg_t> g_rpc_regs;

}  // namespace

void EnsureBackendsLoaded() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef GGML_BACKEND_DL
    // Inside Node, ggml_backend_load_all() searches node's own folder and finds nothing.
    const std::string dir = AddonFolder();
    ggml_backend_load_all_from_path(dir.empty() ? nullptr : dir.c_str());
#endif
    // Static builds register CPU (and RPC) at link time; loading stray .so files beside the
    // addon would mix two copies of ggml, so nothing is loaded there.
  });
}

bool ParseEndpoint(const std::string & endpoint, std::string & host, int & port) {
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= endpoint.size()) return false;
  host = endpoint.substr(0, colon);
  const std::string digits = endpoint.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  port = std::stoi(digits);
  return port >= 1 && port <= 65535 && host.find(':') == std::string::npos;
}

std::vector<ggml_backend_dev_t> AddRpcServers(const std::vector<std::string> & endpoints) {
  std::vector<ggml_backend_dev_t> devices;
  if (endpoints.empty()) return devices;
  EnsureBackendsLoaded();
  std::lock_guard<std::mutex> lock(g_rpc_mutex);
  ggml_backend_reg_t rpc_reg = ggml_backend_reg_by_name("RPC");
  if (rpc_reg == nullptr) throw std::runtime_error("this build has no RPC backend (build with GGML_RPC=ON)");
  using AddServerFn = ggml_backend_reg_t (*)(const char *);
  auto add_server = reinterpret_cast<AddServerFn>(ggml_backend_reg_get_proc_address(rpc_reg, "ggml_backend_rpc_add_server"));
  if (add_server == nullptr) throw std::runtime_error("the RPC backend lacks ggml_backend_rpc_add_server");

  for (const std::string & endpoint : endpoints) {
    auto it = g_rpc_regs.find(endpoint);
    if (it == g_rpc_regs.end()) {
      ProbeRpcServer(endpoint);
      ggml_backend_reg_t reg = add_server(endpoint.c_str());
      if (reg == nullptr) throw std::runtime_error("RPC server " + endpoint + " reports no devices");
      ggml_backend_register(reg);  // makes RPCn visible to ggml_backend_dev_by_name and llama.cpp
      it = g_rpc_regs.emplace(endpoint, reg).first;
    }
    for (size_t i = 0; i < ggml_backend_reg_dev_count(it->second); i++) {
      devices.push_back(ggml_backend_reg_dev_get(it->second, i));
    }
  }
  return devices;
}

const char * DeviceTypeName(enum ggml_backend_dev_type type) {
  switch (type) {
    case GGML_BACKEND_DEVICE_TYPE_CPU: return "cpu";
    case GGML_BACKEND_DEVICE_TYPE_GPU: return "gpu";
    case GGML_BACKEND_DEVICE_TYPE_IGPU: return "igpu";
    default: return "accel";
  }
}

}  // namespace strata
