// Session files: one conversation's KV state and tokens on disk, tied to a model.
// Layout (little-endian): "STRATASN" magic, u32 version, str identity, str model description,
// u64 n_params, u32 n_vocab, u32 n_tokens + i32 tokens, u64 n_state + state bytes,
// then u64 FNV-1a 64 of every byte before it. Strings are u32 length + bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"

namespace strata {

struct SessionModelId {
  std::string identity;     // the caller's model identity (e.g. file hash + name)
  std::string description;  // llama_model_desc
  uint64_t n_params = 0;
  uint32_t n_vocab = 0;
};

struct SessionData {
  SessionModelId model;
  std::vector<llama_token> tokens;
  std::vector<uint8_t> state;
  uint64_t file_bytes = 0;
};

uint64_t Fnv1a64(const uint8_t* data, size_t n, uint64_t hash = 0xcbf29ce484222325ULL);

// Writes through a temp file in the same folder + rename, mode 0600. Returns bytes written.
// Throws std::runtime_error naming the path and the OS error.
uint64_t WriteSessionFile(const std::string& path, const SessionModelId& model,
                          const std::vector<llama_token>& tokens, const std::vector<uint8_t>& state);

// Reads and checks magic, version and checksum; throws std::runtime_error with a clear
// message ("not a Strata session file", "corrupt (checksum mismatch)", ...). Does not compare
// the model: see CheckSessionModel.
SessionData ReadSessionFile(const std::string& path);

// Throws when the file was saved with another model.
void CheckSessionModel(const SessionModelId& file, const SessionModelId& mine, const std::string& path);

}  // namespace strata
