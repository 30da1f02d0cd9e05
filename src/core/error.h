// Error policy: every failure is a haven::Error carrying a category (which maps to the
// documented exit code), the object or path it concerns, and whether retrying can help.
// Errors are thrown across layers and caught once, in the CLI (or a worker boundary that
// records them); nothing is swallowed. A listing error is an Error, never an empty list.
#pragma once

#include <stdexcept>
#include <string>

namespace haven {

enum class ErrorCode {
  kFatal = 1,           // generic failure (exit 1)
  kInvalidArgument,     // bad command line / usage (exit 1)
  kNotFound,            // object or file does not exist
  kIo,                  // I/O error talking to a backend or the file system
  kCorrupt,             // integrity failure: MAC, hash, parse of repository bytes
  kNoRepository,        // repository does not exist (exit 10)
  kLocked,              // lock conflict (exit 11)
  kWrongPassword,       // no key could be opened (exit 12)
  kUnsupported,         // unknown repository version or feature
  kInterrupted,         // SIGINT (exit 130)
  kSecretsFound,        // scan/capture found secrets (exit 4)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string message, bool retryable = false)
      : std::runtime_error(std::move(message)), code_(code), retryable_(retryable) {}
  ErrorCode code() const { return code_; }
  bool retryable() const { return retryable_; }

 private:
  ErrorCode code_;
  bool retryable_;
};

[[noreturn]] inline void Fail(ErrorCode code, std::string message, bool retryable = false) {
  throw Error(code, std::move(message), retryable);
}

// Exit code documented in README.md for an error category.
int ExitCodeFor(ErrorCode code);

}  // namespace haven
