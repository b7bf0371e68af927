// Drafts from a head that reads the model's hidden states (draft_head.h: its MTP head, an EAGLE-3
// or DFlash drafter), planned after the other drafts of the step: every
// decoding sequence left without a draft (no prediction to follow) gets the head's, all in one
// batched run of the head, within the room the step has left. Engine thread only.
#include <algorithm>
#include <chrono>

#include "engine.h"
#include "serial_device.h"

namespace strata {

void Engine::PrepareHeadDrafts() {
  if (!head_ || !head_->ok()) return;
  const SpeculativeConfig& sp = cfg_.spec;
  int32_t decoders = 0, drafted = 0;
  bool prompts = false;
  for (const Slot& s : slots_) {
    if (!s.run) continue;
    if (s.run->decoding) {
      ++decoders;
      drafted += static_cast<int32_t>(s.run->draft.size());
    } else if (!s.run->forking) {
      prompts = true;
    }
  }
  // As PrepareDrafts: drafts never crowd out every decoder's token and a prompt's share.
  int32_t room = cfg_.batch - decoders - drafted - (prompts ? info_.decode_prompt_budget : 0);
  std::vector<HeadJob> jobs;
  std::vector<Slot*> job_slots;
  for (Slot& s : slots_) {
    Active* a = s.run.get();
    if (!a || !a->decoding || !a->draft.empty()) continue;
    int32_t k = a->req.draft_max >= 0 ? a->req.draft_max : sp.draft_max;
    k = std::min(DraftCap(s, k), room);
    if (k < std::max(1, sp.draft_min)) continue;
    HeadJob job;
    job.seq = s.id;
    job.held = &s.held;
    job.last = a->pending;
    job.max = k;
    jobs.push_back(std::move(job));
    job_slots.push_back(&s);
    room -= k;
  }
  if (jobs.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::unique_lock<std::mutex> serial = SerialCompute();
    head_->Draft(jobs);
  }
  draft_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (static_cast<int32_t>(jobs[i].out.size()) >= sp.draft_min) job_slots[i]->run->draft = std::move(jobs[i].out);
  }
}

}  // namespace strata
