// One engine step: plan the batch (every decoding sequence adds its token; the rest of the
// n_batch budget goes to prompt chunks, shortest remaining prompt first), decode, then
// sample, detokenize and check stops per sequence. Engine thread only.
#include <algorithm>
#include <chrono>
#include <new>

#include "batch.h"
#include "engine.h"
#include "serial_device.h"

namespace strata {

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

const char* DecodeError(int32_t rc) {
  switch (rc) {
    case 1: return "no KV cache room for the batch (llama_decode returned 1)";
    case 2: return "decoding was aborted (llama_decode returned 2)";
    case -1: return "invalid batch (llama_decode returned -1)";
    default: return "llama_decode failed";
  }
}

}  // namespace

void Engine::PlanBatch() {
  batch_->n_tokens = 0;
  int32_t budget = cfg_.batch;
  int32_t decoders = 0, decode_tokens = 0;
  prompt_order_.clear();
  // With small chunks (decode_prompt_budget P below the batch, the CPU default) the engine is
  // contended while every slot is taken or requests wait here, and others decode (the server holds
  // requests back until a slot frees): decoders then finish sooner while a long prompt (over 4P
  // left) reads P/4 a step, beside P in all.
  const int32_t P = info_.decode_prompt_budget;
  size_t decoding = 0, reading = 0;
  for (const Slot& s : slots_) {
    const Active* a = s.run.get();
    if (a && a->decoding) ++decoding;
    else if (a && !a->forking && !a->pool_wait) ++reading;
  }
  const size_t active = decoding + reading;
  const bool contended = P < cfg_.batch && decoding > 0 && active > 1 && (!waiting_.empty() || active == slots_.size());
  // A burst is read before it decodes: a sequence with only its first token waits while a prompt
  // admitted before that token, and small enough for one step, is still read. llama.cpp cuts a step
  // of a per-slot KV into one ubatch per count of tokens per sequence, so a step that mixes decode
  // tokens with prompt chunks costs another pass over the weights, paid by every first token still
  // to come; the wait is about one step per such prompt. A longer prompt never holds a decoder back
  // (it reads beside it), nor does a prompt that arrives after the first token, nor a full engine.
  double burst = -1;  // the earliest admission among the prompts in reading that fit one step
  for (const Slot& s : slots_) {
    const Active* a = s.run.get();
    if (contended || info_.kv_unified || !a || a->decoding || a->forking || a->pool_wait) continue;
    if (a->req.prompt.size() - static_cast<size_t>(a->stats.reused) > static_cast<size_t>(cfg_.batch)) continue;
    if (burst < 0 || a->t_admitted < burst) burst = a->t_admitted;
  }
  const auto held = [burst](const Active& a) {
    return a.decoding && a.stats.generated == 1 && burst >= 0 && burst <= a.t_prompt_done;
  };
  for (size_t i = 0; i < slots_.size(); ++i) {
    Active* a = slots_[i].run.get();
    if (!a) continue;
    a->chunk = 0;
    a->logits_at = -1;
    a->event = -1;
    if (held(*a)) {
      a->draft.clear();  // nothing of it is in this step (logits_at stays -1: it samples nothing)
      continue;
    }
    if (a->decoding) {
      const int32_t n = 1 + static_cast<int32_t>(a->draft.size());  // drafts fit: PrepareDrafts
      budget -= n;
      decode_tokens += n;
      ++decoders;
    } else if (!a->forking && !a->pool_wait) {
      prompt_order_.push_back(i);
    }
  }
  // A prompt has no first token yet, and its user waits on it: it gets the whole rest of the step
  // (n_batch less the decode tokens, as llama-server reads), beside decoders too, who still add
  // their token to every step. With small chunks the step shrinks to P prompt tokens while contended
  // (above), and when a prompt with at most P left joins (an interactive request: it finishes in
  // this step, so its first token waits for the step in progress and a small one).
  const bool newcomer = std::any_of(prompt_order_.begin(), prompt_order_.end(), [this, P](size_t i) {
    const Active& a = *slots_[i].run;
    return a.req.prompt.size() - a.n_read <= static_cast<size_t>(P);
  });
  const bool small = contended || (P < cfg_.batch && newcomer);
  int32_t long_cap = budget;
  if (small) {
    if (decoders > 0) budget = std::min(budget, P);
    long_cap = contended ? std::max(8, P / 4) : prompt_order_.size() + static_cast<size_t>(decoders) > 1 ? P : budget;
  }
  const size_t long_prompt = 4 * static_cast<size_t>(P);
  // Shortest remaining prompt first, so short prompts and decoders never wait behind a long read.
  std::sort(prompt_order_.begin(), prompt_order_.end(), [this](size_t x, size_t y) {
    const Active& a = *slots_[x].run;
    const Active& b = *slots_[y].run;
    const size_t ra = a.req.prompt.size() - a.n_read, rb = b.req.prompt.size() - b.n_read;
    return ra != rb ? ra < rb : a.t_admitted < b.t_admitted;
  });
  // Prompts with at most P left finish this step even past P, up to 4P tokens more: requests that
  // arrive together (several clients, a burst of completions) start together instead of one a step.
  int32_t finishing = small && decoders > 0 ? std::max(0, std::min(4 * P, cfg_.batch - decode_tokens - budget)) : 0;
  for (size_t i : prompt_order_) {
    Active& a = *slots_[i].run;
    const size_t remaining = a.req.prompt.size() - a.n_read;
    if (remaining <= static_cast<size_t>(P) && static_cast<int32_t>(remaining) <= budget + finishing) {
      a.chunk = static_cast<int32_t>(remaining);
      const int32_t from_budget = std::min(budget, a.chunk);
      budget -= from_budget;
      finishing -= a.chunk - from_budget;
      continue;
    }
    if (budget <= 0) break;
    const int32_t cap = remaining > long_prompt ? std::min(budget, long_cap) : budget;
    a.chunk = static_cast<int32_t>(std::min<size_t>(remaining, static_cast<size_t>(cap)));
    budget -= a.chunk;
  }
  // A chunk ends where the next image starts: images are evaluated apart (EvalImages).
  for (size_t i : prompt_order_) {
    Active& a = *slots_[i].run;
    for (const ImageSpan& im : a.req.images) {
      if (im.at >= a.n_read && im.at < a.n_read + static_cast<size_t>(a.chunk)) {
        a.chunk = static_cast<int32_t>(im.at - a.n_read);
        break;
      }
    }
  }
  // A chunk ends where a recurrent model's shared prefix does, so a copy of it can be parked.
  for (size_t i : prompt_order_) {
    Active& a = *slots_[i].run;
    if (a.share_at > a.n_read && a.share_at < a.n_read + static_cast<size_t>(a.chunk)) {
      a.chunk = static_cast<int32_t>(a.share_at - a.n_read);
    }
  }
  // Laid out in sequence order: llama splits a non-unified batch into ubatches of
  // consecutive sequence ids, so this order keeps the number of ubatches low.
  for (Slot& s : slots_) {
    Active* a = s.run.get();
    if (!a) continue;
    if (a->decoding) {
      if (held(*a)) continue;
      // The sampled token, then the draft tokens to verify: each one's logits check the next.
      BatchAdd(*batch_, a->pending, static_cast<llama_pos>(s.held.size()), s.id, true);
      a->logits_at = batch_->n_tokens - 1;
      for (size_t k = 0; k < a->draft.size(); ++k) {
        BatchAdd(*batch_, a->draft[k], static_cast<llama_pos>(s.held.size() + 1 + k), s.id, true);
      }
    } else if (a->chunk > 0) {
      const bool completes = a->n_read + static_cast<size_t>(a->chunk) == a->req.prompt.size();
      for (int32_t k = 0; k < a->chunk; ++k) {
        const size_t p = a->n_read + static_cast<size_t>(k);
        BatchAdd(*batch_, a->req.prompt[p], static_cast<llama_pos>(p), s.id, completes && k == a->chunk - 1);
      }
      if (completes) a->logits_at = batch_->n_tokens - 1;
    }
  }
}

bool Engine::Step() {
  const auto t_build = Clock::now();
  step_drafted_ = 0;
  step_accepted_ = 0;
  draft_ms_ = 0;
  PrepareDrafts();
  PrepareHeadDrafts();
  ReservePool();
  const bool imaged = EvalImages();
  PlanBatch();
  if (batch_->n_tokens == 0) return imaged;
  if (test_throw_) throw std::bad_alloc();
  StepTraceRec tr;
  tr.step = steps_;
  tr.t = NowMs();
  for (const Slot& s : slots_) {
    if (!s.run) continue;
    const bool decodes = s.run->decoding && s.run->logits_at >= 0;  // not held back this step
    if (decodes) tr.decode_tokens++;
    tr.draft_tokens += static_cast<int32_t>(s.run->draft.size());
    tr.prompt_tokens += s.run->chunk;
    if (decodes || s.run->chunk > 0) tr.sequences++;
  }
  tr.draft_ms = draft_ms_;
  if (head_ && !info_.kv_unified) OutputEveryRowForHead();
  const auto t_decode = Clock::now();
  tr.build_ms = Ms(t_build, t_decode);
  {
    std::unique_lock<std::mutex> serial = SerialCompute();
    const int32_t rc = llama_decode(ctx_.get(), *batch_);
    if (rc != 0) {
      serial.unlock();
      FailBatch(rc);
      return true;
    }
    llama_synchronize(ctx_.get());
    // The head (MTP, EAGLE-3, DFlash) reads this batch with the target's hidden states (a failure
    // only ends its drafts).
    if (head_) head_->Process(*batch_);
  }
  const auto t_decoded = Clock::now();
  tr.decode_ms = Ms(t_decode, t_decoded);
  steps_++;
  sample_ms_ = 0;
  detok_ms_ = 0;
  AfterDecode(tr.t, tr.decode_ms);
  tr.sample_ms = sample_ms_;
  tr.detok_ms = detok_ms_;
  tr.accepted_tokens = step_accepted_;
  step_traces_.Push(tr);
  return true;
}

void Engine::OutputEveryRowForHead() {
  // llama.cpp cuts a batch over per-slot KV streams into ubatches of equal counts per sequence,
  // which reorders the rows of sequences of unequal counts; it keeps the hidden states a head reads
  // in that order and puts back only output rows in the batch's. So a batch of several sequences with
  // rows that are no output makes every row one (logits for rows nobody samples), and the head reads
  // each row's own state. Without it the head's KV would get another row's state: worse drafts only.
  llama_batch& b = *batch_;
  bool mixed = false, silent = false;
  for (int32_t i = 0; i < b.n_tokens; ++i) {
    mixed = mixed || b.seq_id[i][0] != b.seq_id[0][0];
    silent = silent || b.logits[i] == 0;
  }
  if (!mixed || !silent) return;
  for (int32_t i = 0; i < b.n_tokens; ++i) b.logits[i] = 1;
}

bool Engine::EvalImages() {
  bool any = false;
  for (Slot& s : slots_) {
    Active* a = s.run.get();
    if (!a || a->decoding || a->forking || a->pool_wait || a->req.images.empty()) continue;
    for (const ImageSpan& im : a->req.images) {
      if (im.at != a->n_read) continue;
      any = true;
      const double t = NowMs();
      if (!vision_ || !vision_->Eval(ctx_.get(), *im.image, static_cast<llama_pos>(a->n_read), s.id, cfg_.batch)) {
        llama_memory_seq_rm(mem_, s.id, -1, -1);
        s.held.clear();
        FinishRequest(a->req.key, FinishReason::Error, "the projector failed to evaluate an image");
        break;
      }
      const auto first = a->req.prompt.begin() + static_cast<std::ptrdiff_t>(im.at);
      s.held.insert(s.held.end(), first, first + static_cast<std::ptrdiff_t>(im.n));
      a->n_read += im.n;
      totals_.prompt_computed += im.n;
      a->trace.legs.push_back({t, static_cast<int32_t>(im.n), NowMs() - t});
      EngineEvent& e = NewEvent(EventType::Progress, a->req.id);
      e.read = static_cast<int32_t>(a->n_read);
      e.total = static_cast<int32_t>(a->req.prompt.size());
    }
  }
  return any;
}

void Engine::FailBatch(int32_t rc) {
  // No cells in the shared pool: nothing was written, the latest request ends, the others go on.
  if (rc == 1 && info_.kv_unified) return PoolOverflow();
  const std::string why = std::string(DecodeError(rc)) + " (code " + std::to_string(rc) + ")";
  std::vector<uint64_t> failed;
  for (Slot& s : slots_) {
    Active* a = s.run.get();
    if (!a || (a->chunk == 0 && a->logits_at < 0)) continue;  // not in the batch
    // Part of the batch may be in the KV: drop the sequence rather than trust it.
    llama_memory_seq_rm(mem_, s.id, -1, -1);
    s.held.clear();
    a->draft.clear();
    failed.push_back(a->req.key);
  }
  // Every choice of a failed request ends, also those that were not in this batch.
  for (uint64_t key : failed) FinishRequest(key, FinishReason::Error, why);
}

void Engine::AfterDecode(double step_t, double decode_ms) {
  for (Slot& s : slots_) {
    Active* a = s.run.get();
    if (!a) continue;
    if (a->chunk > 0) {
      const auto first = a->req.prompt.begin() + static_cast<std::ptrdiff_t>(a->n_read);
      s.held.insert(s.held.end(), first, first + a->chunk);
      a->n_read += static_cast<size_t>(a->chunk);
      totals_.prompt_computed += static_cast<uint64_t>(a->chunk);
      EngineEvent& e = NewEvent(EventType::Progress, a->req.id);
      e.read = static_cast<int32_t>(a->n_read);
      e.total = static_cast<int32_t>(a->req.prompt.size());
      a->trace.legs.push_back({step_t, a->chunk, decode_ms});
      if (a->n_read == a->share_at) ParkCopy(s, true);
      if (a->n_read < a->req.prompt.size()) continue;
      a->t_prompt_done = NowMs();
      a->stats.prompt_ms = a->t_prompt_done - a->t_admitted;
      a->trace.prompt_done = a->t_prompt_done;
      if (recurrent_) SaveCheckpoint(s);
      if (a->req.max_tokens == 0) {
        FinishRequest(a->req.key, FinishReason::Length);
        continue;
      }
      a->decoding = true;
      if (a->group) {
        ForkChoices(s);  // the other choices copy the prompt's KV and sample from these logits too
      } else {
        SampleAndEmit(s);
      }
    } else if (a->decoding && a->logits_at >= 0) {
      s.held.push_back(a->pending);
      SampleAndEmit(s);
    }
  }
}

void Engine::Finish(Slot& s, FinishReason reason, const std::string& error, bool stopped_by_string) {
  Active& a = *s.run;
  const double now = NowMs();
  if (a.decoding) {
    a.stats.decode_ms = now - a.t_prompt_done;
  } else if (!a.forking) {
    a.stats.prompt_ms = now - a.t_admitted;
  }
  totals_.generated += static_cast<uint64_t>(a.stats.generated);
  totals_.drafted += static_cast<uint64_t>(a.stats.drafted);
  totals_.accepted += static_cast<uint64_t>(a.stats.accepted);
  a.trace.drafted = a.stats.drafted;
  a.trace.accepted = a.stats.accepted;
  if (!a.group) {
    EngineEvent& e = NewEvent(EventType::Done, a.req.id);
    e.finish = reason;
    e.error = error;
    e.stats = a.stats;
    e.slot = s.id;
    if (!stopped_by_string) e.text = a.text.Flush();
    else e.stop_string = a.text.matched();
    a.trace.finished = now;
    request_traces_.Push(std::move(a.trace));
    totals_.requests++;
  } else {
    Group& g = *a.group;
    ChoiceEnd& end = g.ends[static_cast<size_t>(a.choice)];
    end.finish = reason;
    end.generated = a.stats.generated;
    if (!stopped_by_string) end.text = a.text.Flush();
    if (a.choice == 0) {
      g.stats.prompt_tokens = a.stats.prompt_tokens;
      g.stats.reused = a.stats.reused;
      g.stats.prompt_ms = a.stats.prompt_ms;
      g.trace = std::move(a.trace);
    }
    g.stats.generated += a.stats.generated;
    g.stats.drafted += a.stats.drafted;
    g.stats.accepted += a.stats.accepted;
    g.stats.predicted += a.stats.predicted;
    g.stats.predicted_accepted += a.stats.predicted_accepted;
    g.stats.decode_ms = std::max(g.stats.decode_ms, a.stats.decode_ms);
    if (reason == FinishReason::Error && g.failed != FinishReason::Error) {
      g.failed = FinishReason::Error;
      g.error = error;
    } else if (reason == FinishReason::Cancel && g.failed == FinishReason::Stop) {
      g.failed = FinishReason::Cancel;
    }
    if (--g.live == 0) {
      EngineEvent& e = NewEvent(EventType::Done, a.req.id);
      e.finish = g.failed != FinishReason::Stop ? g.failed : g.ends[0].finish;
      e.error = g.error;
      e.stats = g.stats;
      e.slot = s.id;
      e.choices = std::move(g.ends);
      g.trace.finished = now;
      g.trace.drafted = g.stats.drafted;
      g.trace.accepted = g.stats.accepted;
      request_traces_.Push(std::move(g.trace));
      totals_.requests++;
    }
  }
  s.last_used = ++tick_;
  s.run.reset();
}

void Engine::FinishRequest(uint64_t key, FinishReason reason, const std::string& error) {
  for (Slot& s : slots_) {
    if (s.run && s.run->req.key == key) Finish(s, reason, error);
  }
}

void Engine::EndWaiting(Waiting& w, FinishReason reason, const std::string& error) {
  EngineEvent& e = NewEvent(EventType::Done, w.req.id);
  e.finish = reason;
  e.error = error;
  e.stats.prompt_tokens = static_cast<int32_t>(w.req.prompt.size());
  RequestTraceRec tr;
  tr.id = w.req.id;
  tr.queued = w.queued_ms;
  tr.finished = NowMs();
  request_traces_.Push(std::move(tr));
  totals_.requests++;
}

}  // namespace strata
