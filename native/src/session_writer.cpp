#include "session_writer.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "engine_error.h"

namespace strata {

namespace {

// Test hooks: with STRATA_TEST_SAVE_GATE naming a FIFO, each write first waits for a writer to
// open it, so a test holds a save mid-way and checks that the engine steps meanwhile; and a save
// that must wait for room first opens the FIFO's ".full" twin for writing, so a test sees the bound.
void WaitForTestGate() {
  const char* gate = std::getenv("STRATA_TEST_SAVE_GATE");
  if (gate == nullptr || *gate == '\0') return;
  if (FILE* f = std::fopen(gate, "rb")) std::fclose(f);
}

void TellTestFull() {
  const char* gate = std::getenv("STRATA_TEST_SAVE_GATE");
  if (gate == nullptr || *gate == '\0') return;
  if (FILE* f = std::fopen((std::string(gate) + ".full").c_str(), "wb")) std::fclose(f);
}

}  // namespace

SessionWriter::SessionWriter(std::function<void(CommandResult)> done)
    : done_(std::move(done)), thread_([this] { Run(); }) {}

SessionWriter::~SessionWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SessionWriter::Write(SaveJob job) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!jobs_.empty()) {
    // One waits already: this one waits until the writer takes that one (tests see it begin).
    lock.unlock();
    TellTestFull();
    lock.lock();
    cv_.wait(lock, [&] { return jobs_.empty(); });
  }
  jobs_.push_back(std::move(job));
  cv_.notify_all();
}

void SessionWriter::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return jobs_.empty() && !writing_; });
}

void SessionWriter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    SaveJob job = std::move(jobs_.front());
    jobs_.pop_front();
    writing_ = true;
    cv_.notify_all();  // a Write waiting for room
    lock.unlock();

    CommandResult& r = job.result;
    try {
      WaitForTestGate();
      r.session.bytes = WriteSessionFile(job.path, job.meta, job.model, job.tokens, job.state.data(), job.n_state,
                                         &r.session.phases);
    } catch (const EngineError& e) {
      r.error = e.what();
      r.code = e.code();
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    job.state = StateBuffer();  // the copy goes before the next one is made
    r.session.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - job.t0).count();
    done_(std::move(r));

    lock.lock();
    writing_ = false;
    cv_.notify_all();
  }
}

}  // namespace strata
