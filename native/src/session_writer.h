// Session files written beside the engine thread. The engine copies a sequence's KV out (only it
// may touch the context) and hands the bytes here; the write, its checksum and the syncs run on
// this thread, so the steps go on meanwhile: a long prompt's automatic prefix-cache save used to
// hold every slot for the whole file work (256-464 ms for a 0.5B model's 3-6K tokens on a 2-core VM).
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "request.h"
#include "session_file.h"
#include "state_buffer.h"

namespace strata {

struct SaveJob {
  CommandResult result;  // ticket, tokens and the phases so far (state_ms)
  std::string path;
  std::string meta;
  SessionModelId model;
  std::vector<llama_token> tokens;
  StateBuffer state;
  size_t n_state = 0;
  std::chrono::steady_clock::time_point t0;  // when the engine took the command: SessionResult.ms counts from here
};

class SessionWriter {
 public:
  // `done` gets each job's result on the writer thread.
  explicit SessionWriter(std::function<void(CommandResult)> done);
  // Writes what is queued, then ends.
  ~SessionWriter();
  SessionWriter(const SessionWriter&) = delete;
  SessionWriter& operator=(const SessionWriter&) = delete;

  // Queues the job. With one already waiting behind the one being written, blocks until that one
  // starts: at most two copies of a state are held at once, whatever the rate of saves.
  void Write(SaveJob job);
  // Returns once every queued job is written and its result handed to `done`.
  void Flush();

 private:
  void Run();

  std::function<void(CommandResult)> done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SaveJob> jobs_;  // guarded by mu_
  bool writing_ = false;      // guarded by mu_
  bool stop_ = false;         // guarded by mu_
  std::thread thread_;
};

}  // namespace strata
