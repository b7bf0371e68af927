#include "draft_ngram_llama.h"

#include <algorithm>
#include <stdexcept>

#include "common.h"
#include "speculative.h"

namespace strata {

namespace {

struct KindName {
  const char* name;
  common_speculative_type type;
};

constexpr KindName kKinds[] = {
    {"simple", COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE}, {"map-k", COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K},
    {"map-k4v", COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V}, {"mod", COMMON_SPECULATIVE_TYPE_NGRAM_MOD},
    {"cache", COMMON_SPECULATIVE_TYPE_NGRAM_CACHE},
};

}  // namespace

bool IsNgramKind(const std::string& name) {
  return name == "lookup" || std::any_of(std::begin(kKinds), std::end(kKinds), [&](const KindName& k) { return name == k.name; });
}

LlamaNgramDrafter::LlamaNgramDrafter(const std::string& kind, int32_t n_seq, int32_t draft_max)
    : n_seq_(n_seq), drafted_(static_cast<size_t>(n_seq), false), seen_(static_cast<size_t>(n_seq), 0) {
  const auto* k = std::find_if(std::begin(kKinds), std::end(kKinds), [&](const KindName& x) { return kind == x.name; });
  if (k == std::end(kKinds)) throw std::invalid_argument("not one of llama.cpp's n-gram kinds: '" + kind + "'");
  common_params_speculative params;
  params.types = {k->type};
  // A map's value is the m-gram after a key: one of draft_max tokens drafts wherever that many
  // follow a key (a longer one would need them all, and be cut anyway).
  const auto m = static_cast<uint16_t>(std::clamp(draft_max, 1, 256));
  params.ngram_map_k.size_m = params.ngram_map_k4v.size_m = m;
  // ngram-simple drafts nothing with an m-gram shorter than its key: it gets the key's length then.
  params.ngram_simple.size_m = std::max(m, params.ngram_simple.size_n);
  params.ngram_mod.n_max = m;
  params.ngram_mod.n_min = std::min<int32_t>(params.ngram_mod.n_min, m);
  spec_ = common_speculative_init(params, static_cast<uint32_t>(n_seq));
  if (!spec_) throw std::runtime_error("llama.cpp's ngram-" + kind + " drafter could not start");
}

LlamaNgramDrafter::~LlamaNgramDrafter() { common_speculative_free(spec_); }

void LlamaNgramDrafter::Begin(int32_t seq, const std::vector<llama_token>& tokens) {
  if (seq < 0 || seq >= n_seq_) return;
  drafted_[static_cast<size_t>(seq)] = false;
  seen_[static_cast<size_t>(seq)] = tokens.size();
  common_speculative_begin(spec_, seq, tokens);
}

std::vector<llama_token> LlamaNgramDrafter::Draft(int32_t seq, const std::vector<llama_token>& held, llama_token last,
                                                  int32_t max) {
  std::vector<llama_token> out;
  if (seq < 0 || seq >= n_seq_ || max <= 0) return out;
  // llama.cpp's n-gram maps abort on a sequence shorter than the one they last read.
  if (held.size() < seen_[static_cast<size_t>(seq)]) Begin(seq, held);
  seen_[static_cast<size_t>(seq)] = held.size();
  common_speculative_draft_params& dp = common_speculative_get_draft_params(spec_, seq);
  dp.drafting = true;
  dp.n_max = max;
  dp.n_past = static_cast<llama_pos>(held.size());
  dp.id_last = last;
  dp.prompt = &held;
  dp.result = &out;
  common_speculative_draft(spec_);
  dp.prompt = nullptr;
  dp.result = nullptr;
  if (static_cast<int32_t>(out.size()) > max) out.resize(static_cast<size_t>(max));
  drafted_[static_cast<size_t>(seq)] = !out.empty();
  return out;
}

void LlamaNgramDrafter::Accept(int32_t seq, int32_t accepted) {
  if (seq < 0 || seq >= n_seq_ || !drafted_[static_cast<size_t>(seq)]) return;
  drafted_[static_cast<size_t>(seq)] = false;
  common_speculative_accept(spec_, seq, static_cast<uint16_t>(std::clamp(accepted, 0, 65535)));
}

}  // namespace strata
