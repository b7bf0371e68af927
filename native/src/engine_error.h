// Typed failures of engine commands (sessions): a code that crosses N-API and IPC beside the
// message, so the server maps failures to HTTP statuses by code (backend/validation/engine-errors.ts),
// never by the wording of a message. The names are EngineErrorCode in native/lib/addon.d.ts.
#pragma once
#include <stdexcept>
#include <string>

namespace strata {

enum class ErrorCode {
  Failed,                // anything without a more precise code
  Io,                    // the OS refused a file operation (other than running out of space)
  NoSpace,               // ENOSPC / EDQUOT while writing
  SessionUnreadable,     // not a session file, unsupported version, corrupt (truncated, checksum)
  SessionModelMismatch,  // saved with another model or KV layout
  ConversationNotFound,  // no slot or parked conversation holds the tokens to save
  ParkUnavailable,       // parking is off, over its budget, or free RAM is below the floor
  EngineClosed,          // the engine is closed (or closing)
};

inline const char* ErrorCodeName(ErrorCode c) {
  switch (c) {
    case ErrorCode::Io: return "io_error";
    case ErrorCode::NoSpace: return "no_space";
    case ErrorCode::SessionUnreadable: return "session_unreadable";
    case ErrorCode::SessionModelMismatch: return "session_model_mismatch";
    case ErrorCode::ConversationNotFound: return "conversation_not_found";
    case ErrorCode::ParkUnavailable: return "park_unavailable";
    case ErrorCode::EngineClosed: return "engine_closed";
    case ErrorCode::Failed: break;
  }
  return "failed";
}

class EngineError : public std::runtime_error {
 public:
  EngineError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace strata
