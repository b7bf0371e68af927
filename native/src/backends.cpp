// Dynamic backend loading and ggml RPC endpoints (see backends.h).
#include "backends.h"

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#else
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "ggml-rpc.h"
#include "llama_log.h"
#ifdef _WIN32
#include "os_compat.h"
#endif

namespace strata {

namespace {

// How ggml names its backend libraries: libggml-cpu-haswell.so on Linux, ggml-cpu-haswell.dll
// on Windows (ggml's CMake drops the lib prefix there).
#ifdef _WIN32
const std::string kLibPrefix = "ggml-";
const std::string kLibSuffix = ".dll";
#else
const std::string kLibPrefix = "libggml-";
const std::string kLibSuffix = ".so";
#endif
// A build with one CPU library instead of variants (GGML_CPU_ALL_VARIANTS off): listed as this.
const char * const kSingleCpuName = "cpu";

// Folder of this .node file: dynamic backends (libggml-cuda.so, libggml-cpu-*.so) are copied
// beside it by scripts/build-native.mjs.
#ifdef _WIN32
std::string AddonFolder() {
  HMODULE self = nullptr;
  if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          reinterpret_cast<LPCWSTR>(&AddonFolder), &self)) {
    return "";
  }
  std::wstring path(32768, L'\0');
  const DWORD n = GetModuleFileNameW(self, path.data(), static_cast<DWORD>(path.size()));
  path.resize(n);
  const std::string utf8 = os::Narrow(path);
  const size_t slash = utf8.find_last_of("\\/");
  return slash == std::string::npos ? std::string(".") : utf8.substr(0, slash);
}

// dlopen and friends, the Windows way.
constexpr int RTLD_NOW = 0;
constexpr int RTLD_LOCAL = 0;
void * dlopen(const char * path, int) { return LoadLibraryW(os::Wide(path).c_str()); }
void * dlsym(void * h, const char * name) { return reinterpret_cast<void *>(GetProcAddress(static_cast<HMODULE>(h), name)); }
void dlclose(void * h) { FreeLibrary(static_cast<HMODULE>(h)); }
const char * dlerror() {
  static thread_local char buf[512];
  const DWORD err = GetLastError();
  const DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, err, 0, buf, sizeof buf, nullptr);
  if (n == 0) std::snprintf(buf, sizeof buf, "Windows error %lu", static_cast<unsigned long>(err));
  for (DWORD i = n; i > 0 && (buf[i - 1] == '\n' || buf[i - 1] == '\r'); --i) buf[i - 1] = '\0';
  return buf;
}

using SockHandle = SOCKET;
const SockHandle kNoSock = INVALID_SOCKET;
int CloseSock(SockHandle s) { return closesocket(s); }
int LastSockError() { return WSAGetLastError(); }
bool ConnectPending(int err) { return err == WSAEWOULDBLOCK || err == WSAEINPROGRESS; }
bool Retryable(int err) { return err == WSAEINTR || err == WSAEWOULDBLOCK; }
int PollSock(pollfd * p, int ms) { return WSAPoll(p, 1, ms); }
std::string SockErrorText(int err) {
  char buf[256];
  const DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, static_cast<DWORD>(err), 0, buf, sizeof buf, nullptr);
  std::string s = n ? std::string(buf, n) : "socket error " + std::to_string(err);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}
constexpr int kSendFlags = 0;
// A non-blocking, non-inherited TCP socket (winsock started once per process).
SockHandle OpenSock() {
  static const bool started = [] { WSADATA d; return WSAStartup(MAKEWORD(2, 2), &d) == 0; }();
  if (!started) return kNoSock;
  SOCKET s = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, nullptr, 0, WSA_FLAG_NO_HANDLE_INHERIT);
  if (s == INVALID_SOCKET) return s;
  u_long on = 1;
  ioctlsocket(s, FIONBIO, &on);
  return s;
}
#else
std::string AddonFolder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&AddonFolder), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string path = info.dli_fname;
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

using SockHandle = int;
const SockHandle kNoSock = -1;
int CloseSock(SockHandle s) { return close(s); }
int LastSockError() { return errno; }
bool ConnectPending(int err) { return err == EINPROGRESS; }
bool Retryable(int err) { return err == EINTR || err == EAGAIN; }
int PollSock(pollfd * p, int ms) { return poll(p, 1, ms); }
std::string SockErrorText(int err) { return std::strerror(err); }
constexpr int kSendFlags = MSG_NOSIGNAL;
SockHandle OpenSock() { return socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); }
#endif

// Wire format of ggml-rpc's HELLO (ggml-rpc.cpp, pinned source): request = cmd byte 14,
// u64 size, conn_caps[24]; response = u64 size, {major, minor, patch, pad, conn_caps[24]}.
constexpr uint8_t kRpcCmdHello = 14;
constexpr size_t kRpcConnCapsSize = 24;
constexpr int kConnectTimeoutMs = 3000;
constexpr int kHelloTimeoutMs = 5000;

class Fd {
 public:
  explicit Fd(SockHandle fd) : fd_(fd) {}
  ~Fd() { if (fd_ != kNoSock) CloseSock(fd_); }
  Fd(const Fd &) = delete;
  Fd & operator=(const Fd &) = delete;
  SockHandle get() const { return fd_; }
 private:
  SockHandle fd_;
};

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Sends or receives exactly `size` bytes before `deadline`; false on timeout, error or EOF.
bool TransferAll(SockHandle fd, void * buf, size_t size, bool sending, std::chrono::steady_clock::time_point deadline) {
  auto * p = static_cast<uint8_t *>(buf);
  while (size > 0) {
    pollfd pfd{fd, static_cast<short>(sending ? POLLOUT : POLLIN), 0};
    const int ready = PollSock(&pfd, RemainingMs(deadline));
    if (ready <= 0) return false;
    const auto n = sending ? send(fd, reinterpret_cast<const char *>(p), static_cast<int>(size), kSendFlags)
                           : recv(fd, reinterpret_cast<char *>(p), static_cast<int>(size), 0);
    if (n < 0 && Retryable(LastSockError())) continue;
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

  Fd sock(OpenSock());
  if (sock.get() == kNoSock) throw std::runtime_error("RPC server " + endpoint + ": socket(): " + SockErrorText(LastSockError()));
  const auto connect_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kConnectTimeoutMs);
  if (connect(sock.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0) {
    const int connect_err = LastSockError();
    if (!ConnectPending(connect_err)) {
      throw std::runtime_error("RPC server " + endpoint + " is unreachable: " + SockErrorText(connect_err));
    }
    pollfd pfd{sock.get(), POLLOUT, 0};
    if (PollSock(&pfd, RemainingMs(connect_deadline)) <= 0) {
      throw std::runtime_error("RPC server " + endpoint + " is unreachable: connect timed out after " +
                               std::to_string(kConnectTimeoutMs) + " ms");
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(sock.get(), SOL_SOCKET, SO_ERROR, reinterpret_cast<char *>(&err), &len);
    if (err != 0) throw std::runtime_error("RPC server " + endpoint + " is unreachable: " + SockErrorText(err));
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

namespace {

std::mutex g_load_mutex;
bool g_loaded = false;                // guarded by g_load_mutex
BackendLoadOptions g_load_opts;       // guarded by g_load_mutex
BackendLoadReport g_report;           // guarded by g_load_mutex

// Names (UTF-8) of the entries of `dir`, sorted; none when it cannot be read.
std::vector<std::string> ListFiles(const std::string & dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(std::filesystem::u8path(dir), ec), end; !ec && it != end; it.increment(ec)) {
    out.emplace_back(it->path().filename().u8string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool StartsWith(const std::string & s, const char * prefix) { return s.rfind(prefix, 0) == 0; }
bool EndsWith(const std::string & s, const char * suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Why a library does not load (a missing dependency such as libcudart.so.13), from the loader.
std::string DlopenError(const std::string & path) {
  void * h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h != nullptr) {
    dlclose(h);
    return "it loads, but ggml did not accept it as a backend (built from another ggml version?)";
  }
  const char * e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

std::string JoinNames(const std::vector<CpuVariantDesc> & variants) {
  std::string out;
  for (const auto & v : variants) out += (out.empty() ? "" : ", ") + v.name;
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<CpuVariantDesc> ListCpuVariants() {
  std::vector<CpuVariantDesc> out;
#ifdef GGML_BACKEND_DL
  const std::string dir = AddonFolder();
  const std::string variant_prefix = kLibPrefix + "cpu-";
  const std::string single = kLibPrefix + "cpu" + kLibSuffix;
  for (const std::string & f : ListFiles(dir)) {
    const bool is_single = f == single;
    if (!is_single && (!StartsWith(f, variant_prefix.c_str()) || !EndsWith(f, kLibSuffix.c_str()))) continue;
    CpuVariantDesc v;
    v.name = is_single ? kSingleCpuName : f.substr(variant_prefix.size(), f.size() - variant_prefix.size() - kLibSuffix.size());
    v.path = dir + "/" + f;
    v.amx = v.name == "sapphirerapids";
    // Scoring runs only the library's CPUID checks; ggml_backend_load_best does the same. A
    // single CPU library has no score function: it is built for the platform's oldest CPU.
    if (is_single) {
      v.score = 1;
    } else if (void * h = dlopen(v.path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      using ScoreFn = int (*)();
      if (auto score = reinterpret_cast<ScoreFn>(dlsym(h, "ggml_backend_score"))) v.score = score();
      dlclose(h);
    }
    out.push_back(std::move(v));
  }
  std::stable_sort(out.begin(), out.end(), [](const CpuVariantDesc & a, const CpuVariantDesc & b) { return a.score > b.score; });
#endif
  return out;
}

const BackendLoadReport & LoadBackends(const BackendLoadOptions & opts) {
  std::lock_guard<std::mutex> lock(g_load_mutex);
  if (g_loaded) {
    if (opts.cpu_variant != "auto" && opts.cpu_variant != g_report.cpu_variant) {
      throw std::runtime_error("ggml backends are already loaded with CPU variant '" + g_report.cpu_variant +
                               "'; a process can load only one (asked for '" + opts.cpu_variant + "')");
    }
    if (opts.dirs != g_load_opts.dirs && !opts.dirs.empty()) {
      throw std::runtime_error("ggml backends are already loaded from other folders; a process loads them once");
    }
    return g_report;
  }
  BackendLoadReport report;
  InstallLlamaLog();  // ggml's lines through ours: errors only unless STRATA_LLAMA_LOG says more
#ifdef GGML_BACKEND_DL
  report.cpu_variants = ListCpuVariants();
  const CpuVariantDesc * chosen = nullptr;
  if (opts.cpu_variant == "auto") {
    if (!report.cpu_variants.empty() && report.cpu_variants.front().score > 0) chosen = &report.cpu_variants.front();
  } else {
    for (const auto & v : report.cpu_variants) if (v.name == opts.cpu_variant) chosen = &v;
    if (chosen == nullptr) {
      throw std::runtime_error("unknown CPU variant '" + opts.cpu_variant + "' (this build has: " +
                               JoinNames(report.cpu_variants) + ")");
    }
    if (chosen->score == 0) {
      throw std::runtime_error("CPU variant '" + opts.cpu_variant + "' needs instructions this CPU lacks");
    }
  }
  if (chosen == nullptr) {
    throw std::runtime_error("no CPU variant library of ggml beside the addon suits this CPU (found: " +
                             JoinNames(report.cpu_variants) + ")");
  }
  if (ggml_backend_reg_t reg = ggml_backend_load(chosen->path.c_str())) {
    report.cpu_variant = chosen->name;
    report.loaded.push_back({ggml_backend_reg_name(reg), chosen->path});
  } else {
    throw std::runtime_error("cannot load CPU variant " + chosen->path + ": " + DlopenError(chosen->path));
  }
  // Every other backend library (RPC, Vulkan, CUDA…): the addon's folder first, then `dirs`.
  // ggml's own "failed to load" lines stay unprinted: report.failed says it, with the loader's
  // reason, and the server turns it into one line with what to install. Other errors (a backend
  // that loads but cannot start its device) are printed after the loop.
  LlamaLogCapture quiet(/*quiet=*/true);
  std::vector<std::string> dirs = {AddonFolder()};
  dirs.insert(dirs.end(), opts.dirs.begin(), opts.dirs.end());
  std::set<std::string> done;
  for (const std::string & dir : dirs) {
    for (const std::string & f : ListFiles(dir)) {
      if (!StartsWith(f, kLibPrefix.c_str()) || !EndsWith(f, kLibSuffix.c_str()) || StartsWith(f, (kLibPrefix + "cpu").c_str()) ||
          f == kLibPrefix + "base" + kLibSuffix || done.count(f) != 0) {
        continue;
      }
      const std::string path = dir + "/" + f;
      if (ggml_backend_reg_t reg = ggml_backend_load(path.c_str())) {
        done.insert(f);
        report.loaded.push_back({ggml_backend_reg_name(reg), path});
      } else {
        report.failed.push_back({path, DlopenError(path)});
      }
    }
  }
  for (const std::string & line : quiet.ErrorLines()) {
    if (line.find("failed to load ") == std::string::npos) std::fputs(line.c_str(), stderr);
  }
#else
  // Static and -march=native builds register CPU (and RPC) at link time; loading stray .so files
  // beside the addon would mix two copies of ggml, so nothing is loaded there.
  if (opts.cpu_variant != "auto") {
    throw std::runtime_error("this build has no CPU variants (it was built with STRATA_NATIVE=1); use cpuVariant 'auto'");
  }
  (void)DlopenError;
  (void)JoinNames;
#endif
  g_report = report;
  g_load_opts = opts;
  g_loaded = true;
  return g_report;
}

void EnsureBackendsLoaded() {
  {
    std::lock_guard<std::mutex> lock(g_load_mutex);
    if (g_loaded) return;
  }
  LoadBackends(BackendLoadOptions{});
}

BackendLoadReport BackendReport() {
  std::lock_guard<std::mutex> lock(g_load_mutex);
  return g_report;
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

int SetCpuDeterministic(int mask) {
  static std::mutex mu;
  static int set = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (mask == 0) mask = 15;
  if (const char * env = std::getenv("STRATA_CPU_DETERMINISTIC_MASK"); env != nullptr && *env != '\0') {
    mask = std::atoi(env) & 15;
  }
  mask |= set;  // sticky: computes already made batch-invariant stay so
  ggml_backend_reg_t reg = ggml_backend_reg_by_name("CPU");
  using SetFn = void (*)(int);
  auto fn = reg ? reinterpret_cast<SetFn>(ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_set_deterministic")) : nullptr;
  if (fn == nullptr) {
    throw std::runtime_error("deterministic: the loaded ggml CPU library has no batch-invariant switch "
                             "(a build without native/patches/0002; rebuild with scripts/build-native.mjs)");
  }
  fn(mask);
  set = mask;
  return mask;
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
