#include "session_file.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "engine_error.h"
#include "os_compat.h"

// xxHash from llama.cpp's vendor folder, inlined here only (its symbols stay private to this file).
#define XXH_INLINE_ALL
#include "xxhash/xxhash.h"

namespace strata {

static const char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'S', 'N'};
static const uint32_t kVersion = 2;
static const uint32_t kLegacyVersion = 1;
// Large enough to amortise each system call, small enough that a chunk hashed just before it is
// written (or just after it is read) is still in the CPU's caches.
static const size_t kChunk = 1 << 20;
static const uint32_t kMaxMeta = 64u << 20;

uint64_t Fnv1a64(const uint8_t* data, size_t n, uint64_t hash) {
  for (size_t i = 0; i < n; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

#ifndef EDQUOT
#define EDQUOT ENOSPC  // Windows has no quotas in errno terms
#endif

// The OS error of the call just made, naming the file; running out of space has its own code.
EngineError OsError(const std::string& what, const std::string& path) {
  const int err = errno;
  const ErrorCode code = err == ENOSPC || err == EDQUOT ? ErrorCode::NoSpace : ErrorCode::Io;
  return EngineError(code, what + " " + path + ": " + std::strerror(err));
}

// The file's checksum by version: XXH3-64 (version 2), FNV-1a 64 (version 1).
class Checksum {
 public:
  explicit Checksum(uint32_t version) : xxh_(version >= 2) {
    if (xxh_) XXH3_64bits_reset(&state_);
  }
  void Update(const void* p, size_t n) {
    if (xxh_) XXH3_64bits_update(&state_, p, n);
    else fnv_ = Fnv1a64(static_cast<const uint8_t*>(p), n, fnv_);
  }
  uint64_t Digest() { return xxh_ ? XXH3_64bits_digest(&state_) : fnv_; }

 private:
  bool xxh_;
  XXH3_state_t state_;
  uint64_t fnv_ = 0xcbf29ce484222325ULL;
};

class Head {
 public:
  void Bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf.insert(buf.end(), b, b + n);
  }
  template <typename T> void Pod(T v) { Bytes(&v, sizeof v); }
  void Str(const std::string& s) {
    Pod<uint32_t>(static_cast<uint32_t>(s.size()));
    Bytes(s.data(), s.size());
  }
  std::vector<uint8_t> buf;
};

// Writes chunks to a file, starting each one's write-back at once so the final fsync waits for
// little more than the last chunk.
class ChunkWriter {
 public:
  ChunkWriter(int fd, const std::string& path, SessionPhases* ph) : fd_(fd), path_(path), ph_(ph) {}

  void Write(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
      const size_t len = std::min(n, kChunk);
      const auto t0 = Clock::now();
      Raw(p, len);
#ifdef __linux__
      ::sync_file_range(fd_, static_cast<off_t>(off_ - len), static_cast<off_t>(len), SYNC_FILE_RANGE_WRITE);
#endif
      ph_->write_ms += MsSince(t0);
      p += len;
      n -= len;
    }
  }

  void Raw(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw OsError("cannot write session file", path_);
      }
      p += w;
      n -= static_cast<size_t>(w);
      off_ += static_cast<uint64_t>(w);
    }
  }

  uint64_t bytes() const { return off_; }

 private:
  int fd_;
  const std::string& path_;
  SessionPhases* ph_;
  uint64_t off_ = 0;
};

struct Span {
  const void* data;
  size_t size;
};

// The checksum of the file's parts on a second thread, beside the writes (measured: a 15 MiB
// save's hash and write() calls took 8.9 ms one after the other, 7.0 ms side by side, on the
// 2-core VM). The writer waits for it only to write the trailer; that wait is hash_ms. Joined
// in the destructor too, so a failed write never leaves the thread running.
class BackgroundChecksum {
 public:
  explicit BackgroundChecksum(std::vector<Span> parts)
      : parts_(std::move(parts)), thread_([this] {
          Checksum sum(kVersion);
          for (const Span& p : parts_) sum.Update(p.data, p.size);
          digest_ = sum.Digest();
        }) {}
  ~BackgroundChecksum() {
    if (thread_.joinable()) thread_.join();
  }
  BackgroundChecksum(const BackgroundChecksum&) = delete;
  BackgroundChecksum& operator=(const BackgroundChecksum&) = delete;

  uint64_t Wait() {
    if (thread_.joinable()) thread_.join();
    return digest_;
  }

 private:
  std::vector<Span> parts_;
  uint64_t digest_ = 0;
  std::thread thread_;  // last: starts once the parts are in place
};

// Reads exact lengths out of the mapped file; reading past its end means the file is corrupt.
class MemReader {
 public:
  MemReader(const uint8_t* data, size_t size, const std::string& path) : data_(data), size_(size), path_(path) {}

  const uint8_t* Take(size_t n) {
    if (n > left()) throw Corrupt("truncated");
    const uint8_t* p = data_ + off_;
    off_ += n;
    return p;
  }
  template <typename T> T Pod() {
    T v;
    std::memcpy(&v, Take(sizeof v), sizeof v);
    return v;
  }
  std::string Str(size_t max_len) {
    const uint32_t len = Pod<uint32_t>();
    if (len > max_len || len > left()) throw Corrupt("bad string length");
    const uint8_t* p = Take(len);
    return std::string(reinterpret_cast<const char*>(p), len);
  }
  size_t left() const { return size_ - off_; }
  EngineError Corrupt(const std::string& why) const {
    return EngineError(ErrorCode::SessionUnreadable, "session file " + path_ + " is corrupt (" + why + ")");
  }

 private:
  const uint8_t* data_;
  size_t size_;
  const std::string& path_;
  size_t off_ = 0;
};

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) Close(fd_); }
  static int Close(int fd) { return ::close(fd); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { const int f = fd_; fd_ = -1; return f; }

 private:
  int fd_;
};

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

uint64_t WriteSessionFile(const std::string& path, const std::string& meta, const SessionModelId& model,
                          const std::vector<llama_token>& tokens, const uint8_t* state, size_t n_state,
                          SessionPhases* phases) {
  if (meta.size() > kMaxMeta) throw std::runtime_error("session description is too large (" + std::to_string(meta.size()) + " bytes)");
  Head head;
  head.Bytes(kMagic, sizeof kMagic);
  head.Pod<uint32_t>(kVersion);
  head.Pod<uint32_t>(static_cast<uint32_t>(meta.size()));
  head.Bytes(meta.data(), meta.size());
  head.Str(model.identity);
  head.Str(model.description);
  head.Pod<uint64_t>(model.n_params);
  head.Pod<uint32_t>(model.n_vocab);
  head.Pod<uint32_t>(static_cast<uint32_t>(tokens.size()));
  Head mid;
  mid.Pod<uint64_t>(n_state);

  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp-" + std::to_string(os::Pid()) + "-" + std::to_string(counter++);
  Fd fd(os::Open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600));
  if (fd.get() < 0) throw OsError("cannot create session file", tmp);
  uint64_t bytes = 0;
  try {
    const std::vector<Span> parts = {
        {head.buf.data(), head.buf.size()}, {tokens.data(), tokens.size() * sizeof(llama_token)},
        {mid.buf.data(), mid.buf.size()}, {state, n_state}};
    BackgroundChecksum sum(parts);
    ChunkWriter w(fd.get(), tmp, phases);
    for (const Span& p : parts) w.Write(p.data, p.size);
    auto t_hash = Clock::now();
    const uint64_t digest = sum.Wait();
    phases->hash_ms += MsSince(t_hash);
    w.Raw(&digest, sizeof digest);
    bytes = w.bytes();
    const auto t0 = Clock::now();
    if (os::SyncData(fd.get()) != 0) throw OsError("cannot sync session file", tmp);
    if (Fd::Close(fd.release()) != 0) throw OsError("cannot close session file", tmp);
    if (os::Replace(tmp, path) != 0) throw OsError("cannot rename session file to", path);
    os::SyncDir(DirOf(path));
    phases->sync_ms += MsSince(t0);
  } catch (...) {
    os::Remove(tmp);
    throw;
  }
  return bytes;
}

MappedFile::~MappedFile() {
  if (data_) os::Unmap(data_, size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) os::Unmap(data_, size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

SessionData ReadSessionFile(const std::string& path, SessionPhases* phases) {
  auto t0 = Clock::now();
  Fd fd(os::Open(path, O_RDONLY));
  if (fd.get() < 0) throw OsError("cannot open session file", path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw EngineError(ErrorCode::Failed, "session file " + path + " is not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t start = sizeof kMagic + 4;
  SessionData d;
  d.file_bytes = size;
  if (size >= start) {
    // One mapping, its pages faulted in now: the checksum and the state's reader use the page
    // cache's pages in place (a read() into fresh memory cost twice as much: the copy and the
    // new pages' faults).
    void* map = os::MapReadOnly(fd.get(), size);
    if (map == nullptr) throw OsError("cannot map session file", path);
    d.file = MappedFile(map, size);
  }
  if (size < start || std::memcmp(d.file.data(), kMagic, sizeof kMagic) != 0) {
    throw EngineError(ErrorCode::SessionUnreadable, path + " is not a Strata session file");
  }
  MemReader r(d.file.data(), size, path);
  r.Take(sizeof kMagic);
  d.version = r.Pod<uint32_t>();
  if (d.version != kVersion && d.version != kLegacyVersion) {
    throw EngineError(ErrorCode::SessionUnreadable, "session file " + path + " has unsupported version " + std::to_string(d.version) +
                             " (expected " + std::to_string(kVersion) + ")");
  }
  if (d.version >= 2) {
    const uint32_t n_meta = r.Pod<uint32_t>();
    if (n_meta > kMaxMeta || n_meta > r.left()) throw r.Corrupt("bad description length");
    d.meta.assign(reinterpret_cast<const char*>(r.Take(n_meta)), n_meta);
  }
  d.model.identity = r.Str(1 << 16);
  d.model.description = r.Str(1 << 16);
  d.model.n_params = r.Pod<uint64_t>();
  d.model.n_vocab = r.Pod<uint32_t>();
  const uint32_t n_tokens = r.Pod<uint32_t>();
  if (static_cast<uint64_t>(n_tokens) * sizeof(llama_token) + 16 > r.left()) throw r.Corrupt("bad token count");
  d.tokens.resize(n_tokens);
  std::memcpy(d.tokens.data(), r.Take(n_tokens * sizeof(llama_token)), n_tokens * sizeof(llama_token));
  const uint64_t n_state = r.Pod<uint64_t>();
  if (n_state + 8 != r.left()) throw r.Corrupt("bad state size");
  d.n_state = static_cast<size_t>(n_state);
  d.state = r.Take(d.n_state);
  const uint64_t stored = r.Pod<uint64_t>();
  phases->read_ms += MsSince(t0);

  // Every byte before the checksum, in one pass (the state is not used before this matches).
  t0 = Clock::now();
  Checksum sum(d.version);
  sum.Update(d.file.data(), size - sizeof stored);
  const uint64_t actual = sum.Digest();
  phases->hash_ms += MsSince(t0);
  if (actual != stored) throw r.Corrupt("checksum mismatch");
  return d;
}

void CheckSessionModel(const SessionModelId& file, const SessionModelId& mine, const std::string& path) {
  if (file.identity != mine.identity || file.description != mine.description ||
      file.n_params != mine.n_params || file.n_vocab != mine.n_vocab) {
    throw EngineError(ErrorCode::SessionModelMismatch, "session file " + path + " was saved with another model (\"" + file.identity +
                             "\", " + file.description + ") and cannot be used with this one (\"" +
                             mine.identity + "\", " + mine.description + ")");
  }
}

}  // namespace strata
