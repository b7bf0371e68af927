// The helpers of llama.cpp's common library (common/common.h) that its speculative decoding
// (common/speculative.cpp, with sampling.cpp and the n-gram maps it links) calls, defined here so
// those files link without common.cpp, which would pull in the rest of llama.cpp's tool code
// (arguments, downloads, chat templates). The head drafters (draft_head.h) uses them.
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.h"
#include "ggml.h"
#include "llama.h"

common_time_meas::common_time_meas(int64_t & t_acc, bool disable) : t_start_us(disable ? -1 : ggml_time_us()), t_acc(t_acc) {}

common_time_meas::~common_time_meas() {
  if (t_start_us >= 0) t_acc += ggml_time_us() - t_start_us;
}

std::string string_format(const char * fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  const int size = std::vsnprintf(nullptr, 0, fmt, ap);
  std::string out;
  if (size > 0 && size < INT_MAX) {
    std::vector<char> buf(static_cast<size_t>(size) + 1);
    std::vsnprintf(buf.data(), buf.size(), fmt, ap2);
    out.assign(buf.data(), static_cast<size_t>(size));
  }
  va_end(ap2);
  va_end(ap);
  return out;
}

std::string regex_escape(const std::string & s) {
  static const std::regex special_chars("[.^$|()*+?\\[\\]{}\\\\]");
  return std::regex_replace(s, special_chars, "\\$&");
}

void common_batch_clear(llama_batch & batch) { batch.n_tokens = 0; }

void common_batch_add(llama_batch & batch, llama_token id, llama_pos pos, const std::vector<llama_seq_id> & seq_ids, bool logits) {
  GGML_ASSERT(batch.seq_id[batch.n_tokens] && "llama_batch size exceeded");
  batch.token[batch.n_tokens] = id;
  batch.pos[batch.n_tokens] = pos;
  batch.n_seq_id[batch.n_tokens] = static_cast<int32_t>(seq_ids.size());
  for (size_t i = 0; i < seq_ids.size(); ++i) batch.seq_id[batch.n_tokens][i] = seq_ids[i];
  batch.logits[batch.n_tokens] = logits;
  batch.n_tokens++;
}

std::vector<llama_token> common_tokenize(const llama_vocab * vocab, const std::string & text, bool add_special, bool parse_special) {
  int32_t n = static_cast<int32_t>(text.length()) + 2 * add_special;
  std::vector<llama_token> out(static_cast<size_t>(n));
  n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.length()), out.data(), n, add_special, parse_special);
  if (n == std::numeric_limits<int32_t>::min()) throw std::runtime_error("tokenization failed: the text is too large");
  if (n < 0) {
    out.resize(static_cast<size_t>(-n));
    llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.length()), out.data(), -n, add_special, parse_special);
  } else {
    out.resize(static_cast<size_t>(n));
  }
  return out;
}

std::string common_token_to_piece(const llama_vocab * vocab, llama_token token, bool special) {
  std::string piece(16, '\0');
  const int n = llama_token_to_piece(vocab, token, &piece[0], static_cast<int32_t>(piece.size()), 0, special);
  if (n < 0) {
    piece.resize(static_cast<size_t>(-n));
    llama_token_to_piece(vocab, token, &piece[0], -n, 0, special);
  } else {
    piece.resize(static_cast<size_t>(n));
  }
  return piece;
}

std::string common_token_to_piece(const llama_context * ctx, llama_token token, bool special) {
  return common_token_to_piece(llama_model_get_vocab(llama_get_model(ctx)), token, special);
}

// common_speculative_init_from_params (a server's way to load a draft model from its parameters)
// needs these; the engine makes its own contexts and never calls it.
llama_model_params common_model_params_to_llama(common_params &) {
  throw std::logic_error("common_model_params_to_llama is not linked into the engine");
}

llama_context_params common_context_params_to_llama(const common_params &) {
  throw std::logic_error("common_context_params_to_llama is not linked into the engine");
}
