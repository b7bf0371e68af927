#include "session_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace strata {

static const char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'S', 'N'};
static const uint32_t kVersion = 1;

uint64_t Fnv1a64(const uint8_t* data, size_t n, uint64_t hash) {
  for (size_t i = 0; i < n; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

namespace {

class Writer {
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

class Reader {
 public:
  Reader(const uint8_t* p, size_t n, const std::string& path) : p_(p), n_(n), path_(path) {}
  void Bytes(void* out, size_t n) {
    if (n > n_ - off_) throw std::runtime_error("session file " + path_ + " is corrupt (truncated)");
    std::memcpy(out, p_ + off_, n);
    off_ += n;
  }
  template <typename T> T Pod() {
    T v;
    Bytes(&v, sizeof v);
    return v;
  }
  std::string Str(size_t max_len) {
    const uint32_t len = Pod<uint32_t>();
    if (len > max_len) throw std::runtime_error("session file " + path_ + " is corrupt (bad string length)");
    std::string s(len, '\0');
    Bytes(s.data(), len);
    return s;
  }
  size_t left() const { return n_ - off_; }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t off_ = 0;
  const std::string& path_;
};

std::string OsError(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

void WriteAll(int fd, const uint8_t* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(OsError("cannot write session file", path));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

uint64_t WriteSessionFile(const std::string& path, const SessionModelId& model,
                          const std::vector<llama_token>& tokens, const std::vector<uint8_t>& state) {
  // The header is small; tokens and state are written from where they are (no second copy
  // of a possibly large state), hashed as they go.
  Writer head;
  head.Bytes(kMagic, sizeof kMagic);
  head.Pod<uint32_t>(kVersion);
  head.Str(model.identity);
  head.Str(model.description);
  head.Pod<uint64_t>(model.n_params);
  head.Pod<uint32_t>(model.n_vocab);
  head.Pod<uint32_t>(static_cast<uint32_t>(tokens.size()));
  Writer mid;
  mid.Pod<uint64_t>(state.size());
  const auto* tok_bytes = reinterpret_cast<const uint8_t*>(tokens.data());
  const size_t tok_n = tokens.size() * sizeof(llama_token);
  uint64_t hash = Fnv1a64(head.buf.data(), head.buf.size());
  hash = Fnv1a64(tok_bytes, tok_n, hash);
  hash = Fnv1a64(mid.buf.data(), mid.buf.size(), hash);
  hash = Fnv1a64(state.data(), state.size(), hash);

  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(OsError("cannot create session file", tmp));
  try {
    WriteAll(fd, head.buf.data(), head.buf.size(), tmp);
    WriteAll(fd, tok_bytes, tok_n, tmp);
    WriteAll(fd, mid.buf.data(), mid.buf.size(), tmp);
    WriteAll(fd, state.data(), state.size(), tmp);
    WriteAll(fd, reinterpret_cast<const uint8_t*>(&hash), sizeof hash, tmp);
    if (::fsync(fd) != 0) throw std::runtime_error(OsError("cannot sync session file", tmp));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string msg = OsError("cannot rename session file to", path);
    ::unlink(tmp.c_str());
    throw std::runtime_error(msg);
  }
  return head.buf.size() + tok_n + mid.buf.size() + state.size() + sizeof hash;
}

SessionData ReadSessionFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(OsError("cannot open session file", path));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error("session file " + path + " is not a regular file");
  }
  std::vector<uint8_t> buf(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t r = ::read(fd, buf.data() + got, buf.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  buf.resize(got);

  if (buf.size() < sizeof kMagic || std::memcmp(buf.data(), kMagic, sizeof kMagic) != 0) {
    throw std::runtime_error(path + " is not a Strata session file");
  }
  if (buf.size() < sizeof kMagic + 4 + 8) {
    throw std::runtime_error("session file " + path + " is corrupt (truncated)");
  }
  uint64_t stored = 0;
  std::memcpy(&stored, buf.data() + buf.size() - 8, 8);
  if (Fnv1a64(buf.data(), buf.size() - 8) != stored) {
    throw std::runtime_error("session file " + path + " is corrupt (checksum mismatch)");
  }

  Reader r(buf.data(), buf.size() - 8, path);
  char magic[8];
  r.Bytes(magic, sizeof magic);
  const uint32_t version = r.Pod<uint32_t>();
  if (version != kVersion) {
    throw std::runtime_error("session file " + path + " has unsupported version " + std::to_string(version) +
                             " (expected " + std::to_string(kVersion) + ")");
  }
  SessionData d;
  d.file_bytes = buf.size();
  d.model.identity = r.Str(1 << 16);
  d.model.description = r.Str(1 << 16);
  d.model.n_params = r.Pod<uint64_t>();
  d.model.n_vocab = r.Pod<uint32_t>();
  const uint32_t n_tokens = r.Pod<uint32_t>();
  if (static_cast<uint64_t>(n_tokens) * sizeof(llama_token) > r.left()) {
    throw std::runtime_error("session file " + path + " is corrupt (bad token count)");
  }
  d.tokens.resize(n_tokens);
  r.Bytes(d.tokens.data(), n_tokens * sizeof(llama_token));
  const uint64_t n_state = r.Pod<uint64_t>();
  if (n_state != r.left()) throw std::runtime_error("session file " + path + " is corrupt (bad state size)");
  d.state.resize(n_state);
  r.Bytes(d.state.data(), n_state);
  return d;
}

void CheckSessionModel(const SessionModelId& file, const SessionModelId& mine, const std::string& path) {
  if (file.identity != mine.identity || file.description != mine.description ||
      file.n_params != mine.n_params || file.n_vocab != mine.n_vocab) {
    throw std::runtime_error("session file " + path + " was saved with another model (\"" + file.identity +
                             "\", " + file.description + ") and cannot be used with this one (\"" +
                             mine.identity + "\", " + mine.description + ")");
  }
}

}  // namespace strata
