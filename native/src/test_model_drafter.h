#pragma once
// The drafter test models: an EAGLE-3 head, a DFlash block drafter and a DSpark one (DFlash with
// a Markov head, without a confidence head) made for the "tiny" shape
// (they read its layers' inputs and share its token embeddings and output head, as published
// drafters of full-vocabulary targets do). Random weights: their drafts are noise, which is what the
// engine's parity tests need (every draft verified, most rejected) so that path runs in CI.
#include <cstdint>
#include <string>
#include <vector>

#include "gguf.h"

namespace strata {

// A drafter architecture ("eagle3" | "dflash").
bool IsDrafterArch(const std::string & arch);

// One tensor of a drafter: a weight matrix (std_of: which weight family's scale) or, with
// std_of == Family::kNorm, a norm weight of ones.
struct DrafterTensor {
  enum class Family { kNorm, kUp, kQk, kV, kO, kDown };
  std::string name;
  int64_t ne0, ne1;
  Family family;
};

// The tensors of a drafter of `kind` ("eagle3", "dflash", "dspark") with these sizes (one layer).
std::vector<DrafterTensor> DrafterTensors(const std::string & kind, int64_t n_embd, int64_t n_head, int64_t n_head_kv, int64_t n_ff,
                                          int64_t n_vocab);

// The drafter's own metadata (which target layers it reads, its target's width, DFlash's block and
// mask token), after the llama hyper-parameters and the tokenizer are set.
void SetDrafterMetadata(gguf_context * g, const std::string & kind, int64_t n_embd, int64_t n_vocab);

}  // namespace strata
