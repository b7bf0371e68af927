// Plain types shared by the engine thread and the N-API layer: requests in, events out.
// No llama_context here; these values cross threads by move.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine_error.h"
#include "grammar_trigger.h"
#include "llama.h"
#include "session_file.h"
#include "vision.h"

namespace strata {

enum class FinishReason { Stop, Length, Cancel, Error };
const char* FinishReasonName(FinishReason reason);

// Defaults mean "off": temperature 0 is greedy, penalties 1/0 disable themselves.
struct SamplingParams {
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  uint32_t seed = LLAMA_DEFAULT_SEED;
  float repeat_penalty = 1.0f;
  int32_t repeat_last_n = 64;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::vector<llama_logit_bias> logit_bias;
  // A thinking budget: once `think_budget` tokens were sampled inside the thinking (opened by
  // `think_open` at the output's start, or already by the prompt: `think_inside`), the next
  // tokens are `think_close`, and sampling goes on after them. -1: no budget.
  int32_t think_budget = -1;
  std::vector<llama_token> think_open;
  std::vector<llama_token> think_close;
  bool think_inside = false;
};

// A validated request (the N-API layer checks every field before it gets here).
struct GenerateRequest {
  // Grammar constraining the output (parsed on the JS thread; each sequence samples with its own
  // clone, so the state is per request and choice); null = unconstrained, at no cost.
  std::shared_ptr<llama_sampler> grammar;
  // With a grammar: null, it constrains from the first token; else it is lazy (the sampler was
  // built with these triggers' patterns) and constrains from the first trigger on.
  std::shared_ptr<const GrammarTriggers> grammar_triggers;
  // Log-probabilities per emitted token: -1 none; 0 the chosen token's; N also the N most likely.
  int32_t logprobs = -1;
  // Choices: n sequences that share the prompt's KV (copied once it is read), each with its own
  // sampler (seed + choice index) and its own end.
  int32_t n = 1;
  // Speculative draft tokens per step: -1 the engine's setting, 0 none.
  int32_t draft_max = -1;
  // Drafts from the sequence's own n-grams: -1 as the engine's speculative.ngram says, 0 none, 1 on
  // (an infill request under --spec auto: the code around the cursor repeats).
  int32_t ngram = -1;
  // Predicted output (OpenAI's `prediction`): the tokens the answer is expected to repeat, drafted
  // from wherever the answer currently follows them (draft_prediction.h); empty = none.
  std::vector<llama_token> prediction;
  int64_t id = 0;      // the caller's id (reusable once its 'done' was delivered)
  uint64_t key = 0;    // unique for the engine's lifetime: cancels address this, never a reused id
  std::vector<llama_token> prompt;
  // Images in the prompt (vision.h), in order: each covers prompt[at, at + n), its placeholders.
  std::vector<ImageSpan> images;
  int32_t max_tokens = 0;
  SamplingParams sampling;
  std::vector<std::string> stop;
  std::vector<llama_token> stop_tokens;
  // Token ids whose text is rendered even when they are special/control (tool-call markers such
  // as <|python_tag|>, like llama-server's preserved tokens); other special tokens render as "".
  std::vector<llama_token> render_tokens;
  bool ignore_eos = false;
  // false: read the whole prompt, reusing no slot's or parked KV (llama-server's cache_prompt).
  bool cache_prompt = true;
  // The prompt's first tokens that other conversations share (a coding agent's system prompt and
  // tools; 0: none said). A recurrent model's state cannot be cut back there later, so the engine
  // parks a copy of the sequence as it reads past them, for the next conversation that starts so.
  int32_t shared_prefix = 0;
  int32_t priority = 0;
};

// Embedding models: several inputs, each pooled into one vector; inputs of many requests share
// engine steps (one sequence each).
struct EmbedRequest {
  int64_t id = 0;
  uint64_t key = 0;
  std::vector<std::vector<llama_token>> inputs;
  bool normalize = true;   // L2 norm 1 (what OpenAI returns)
  size_t next = 0;         // inputs handed to a step so far (engine thread)
  size_t done = 0;         // inputs whose vector was emitted (engine thread)
  int32_t tokens = 0;      // summed input tokens
  double queued_ms = 0;
  double admitted_ms = -1; // its first step (engine thread)
};

struct RequestStats {
  int32_t prompt_tokens = 0;
  int32_t reused = 0;
  int32_t generated = 0;
  double prompt_ms = 0;
  double decode_ms = 0;
  int32_t drafted = 0;   // speculative tokens verified
  int32_t accepted = 0;  // of those, the ones the target model agreed with
  int32_t predicted = 0;           // of the drafted, those taken from the prediction
  int32_t predicted_accepted = 0;  // and of those, the ones the target agreed with
};

// One emitted token's log-probability (log-softmax of the model's logits, before sampling) and
// the most likely alternatives; pieces are the token's bytes (maybe part of a UTF-8 character).
struct TokenLogprob {
  llama_token id = -1;
  float logprob = 0;
  std::string piece;
  std::vector<TokenLogprob> top;
};

// How one choice of a request with n > 1 ended.
struct ChoiceEnd {
  FinishReason finish = FinishReason::Stop;
  int32_t generated = 0;
  std::string text;  // withheld text released at its end
};

enum class EventType { Admitted, Progress, Tokens, Embedding, Done };

// One event of one request; which fields matter depends on `type` (see addon.d.ts EngineEvent).
struct EngineEvent {
  EventType type = EventType::Done;
  int64_t id = 0;
  int32_t slot = -1;          // admitted
  bool restored = false;      // admitted
  int32_t read = 0;           // progress
  int32_t total = 0;          // progress; admitted: prompt tokens
  int32_t choice = 0;         // tokens: which of the request's n sequences
  std::vector<llama_token> ids;  // tokens
  std::vector<TokenLogprob> logprobs;  // tokens, one per id when the request asked for them
  std::string text;           // tokens, done
  std::vector<ChoiceEnd> choices;  // done, n > 1
  int32_t index = 0;          // embedding: which input
  std::vector<float> vector;  // embedding
  FinishReason finish = FinishReason::Stop;  // done
  std::string error;          // done
  std::string error_code;     // done: "context_full" when the shared KV pool ended it ("" otherwise)
  std::string stop_string;    // done: the stop string that ended it ("" otherwise)
  RequestStats stats;         // done (admitted: reused)
};

// Where a loaded session's state went: straight into an idle slot, or the park (every slot busy).
enum class SessionInto { Slot, Park };

struct SessionResult {
  int32_t tokens = 0;
  uint64_t bytes = 0;
  double ms = 0;
  SessionPhases phases;
  std::string meta;  // load: the description stored in the file (empty for version-1 files)
  SessionInto into = SessionInto::Park;  // load only
};

// The answer to a command that JS awaits (saveSession, loadSession).
struct CommandResult {
  uint64_t ticket = 0;
  std::string error;  // empty = success
  ErrorCode code = ErrorCode::Failed;  // with an error: what kind (engine_error.h)
  SessionResult session;
  std::vector<llama_token> token_ids;
};

// Everything one engine step produced; crosses to the JS thread in one call.
struct StepMessage {
  std::vector<EngineEvent> events;
  // steady_clock (CLOCK_MONOTONIC on Linux) in ms when the engine thread handed the message over;
  // the server compares it with process.hrtime to measure its own per-token overhead.
  double handed_ms = 0;
  std::vector<CommandResult> results;
  bool closed = false;  // the engine thread has ended (close() or a fatal error)
  std::string fatal;    // with closed: the error that ended the thread (empty after close())
};

}  // namespace strata
