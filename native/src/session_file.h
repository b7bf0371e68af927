// Session files: one conversation's KV state and tokens on disk, tied to a model, with the
// server's description of it (the chat messages it was saved from) in the same file, so a save
// is one atomic rename and nothing can describe a state it does not hold.
//
// Layout (little-endian), version 2:
//   "STRATASN" magic, u32 version, u32 n_meta + meta bytes (the server's JSON, opaque here),
//   str identity, str model description, u64 n_params, u32 n_vocab, u32 n_tokens + i32 tokens,
//   u64 n_state + state bytes, then u64 XXH3-64 of every byte before it.
// Strings are u32 length + bytes. Version 1 (no meta, FNV-1a 64 checksum; its description lived
// in a NAME.json sidecar) is still read.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"
#include "state_buffer.h"

namespace strata {

struct SessionModelId {
  std::string identity;     // the caller's model identity (e.g. file hash + name)
  std::string description;  // llama_model_desc
  uint64_t n_params = 0;
  uint32_t n_vocab = 0;
};

// Where the time of a save or load went, ms (0 where a phase does not apply).
struct SessionPhases {
  double state_ms = 0;  // save: copying the sequence's KV out; load: putting the state into a slot's KV (or the park)
  double read_ms = 0;   // load: mapping the file (its pages faulted in at once) and parsing its head
  double hash_ms = 0;   // checksum. Save: the wait for it (a second thread hashes beside the writes); load: over the mapped file
  double write_ms = 0;  // save: write() calls (the page cache, with write-back started per chunk)
  double sync_ms = 0;   // save: fdatasync of the file, rename, fsync of the folder
};

// A file mapped read-only: the page cache's own pages, so reading it copies nothing. Unmapped
// when destroyed. Saves replace a session file by rename, never by writing into it, so a file
// being read is never changed under its mapping.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(void* data, size_t size) : data_(static_cast<const uint8_t*>(data)), size_(size) {}
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

struct SessionData {
  uint32_t version = 0;
  std::string meta;  // empty for version 1
  SessionModelId model;
  std::vector<llama_token> tokens;
  MappedFile file;
  const uint8_t* state = nullptr;  // the KV state's bytes, inside `file` (checked against the checksum)
  size_t n_state = 0;
  uint64_t file_bytes = 0;
};

uint64_t Fnv1a64(const uint8_t* data, size_t n, uint64_t hash = 0xcbf29ce484222325ULL);

// Writes a version-2 file through a temp file in the same folder (NAME.tmp-PID-N, mode 0600),
// fdatasync, rename over `path`, fsync of the folder. Returns bytes written. Throws
// std::runtime_error naming the path and the OS error; the temp file is removed on failure.
uint64_t WriteSessionFile(const std::string& path, const std::string& meta, const SessionModelId& model,
                          const std::vector<llama_token>& tokens, const uint8_t* state, size_t n_state,
                          SessionPhases* phases);

// Maps the file and checks magic, version, lengths and the checksum of every byte before the
// state can be used; the state stays in the mapping (SessionData.state), for the caller to put
// into a slot or copy into the park. Throws EngineError with a clear message ("not a Strata
// session file", "corrupt (checksum mismatch)", ...). Does not compare the model: see
// CheckSessionModel.
SessionData ReadSessionFile(const std::string& path, SessionPhases* phases);

// Throws when the file was saved with another model.
void CheckSessionModel(const SessionModelId& file, const SessionModelId& mine, const std::string& path);

}  // namespace strata
