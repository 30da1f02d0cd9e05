// A Backend decorator that retries calls failing with a retryable haven::Error, with
// exponential backoff. Errors with retryable() == false (kNotFound, ENOSPC, a permanent
// injected fault, ...) and exceptions of other types pass through at once, except:
//  * Load, LoadInto: one kCorrupt (a short read, possibly a truncated transfer) is retried once.
//  * LoadStream: the same; a retry asks only for the bytes not yet delivered, and an
//    exception thrown by the sink is never retried.
//  * Save: a retry after a lost reply finds the object with equal size, which the Backend
//    contract accepts, so retried saves are safe.
//  * Remove: kNotFound on a second or later attempt counts as success (an earlier attempt
//    removed the object and only its reply was lost).
//  * List: entries delivered by a failed attempt are not delivered again by the next one;
//    an exception thrown by fn itself is never retried.
//  * NewPackStream: the inner backend's stream, not retried: its bytes are on their way to
//    a temp file, not kept (that is its point). For storage whose requests are round trips
//    (which has no stream of its own) a SpoolPackStream, whose commit is this SaveFrom:
//    retried like Save, each attempt reading the temp file again.
// When attempts run out, the last error is rethrown with " (gave up after N attempts)"
// appended to its message, keeping its code and retryable flag.
//
// Thread-safe if the inner backend is; the decorator holds no mutable state.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "core/error.h"

namespace haven {

struct RetryOptions {
  int max_attempts = 10;                        // tries per call, including the first
  std::chrono::milliseconds base_delay{500};    // before the second try; doubles each time
  std::chrono::milliseconds max_delay{30'000};  // cap for one delay
  bool jitter = true;                           // scale each delay by a random [0.5, 1]
  // Called before each retry, e.g. to report "load index/12ab...: <error>, retrying".
  std::function<void(const std::string& what, const Error& error, int failed_attempt,
                     std::chrono::milliseconds delay)>
      on_retry;
  // Waits between attempts; defaults to std::this_thread::sleep_for (tests may replace it).
  std::function<void(std::chrono::milliseconds)> sleep;
};

class RetryBackend : public Backend {
 public:
  explicit RetryBackend(std::shared_ptr<Backend> inner, RetryOptions options = {});

  std::string Location() const override { return inner_->Location(); }
  bool Exists() override;
  void Create() override;
  void Save(const Handle& h, ByteView data) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override;
  std::optional<uint64_t> Stat(const Handle& h) override;
  std::optional<int64_t> ModTime(const Handle& h) override;
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;
  void SaveFrom(const Handle& h, const SaveSource& src) override;
  // The inner backend's stream when it has one (the local directory's); where requests are
  // round trips, a SpoolPackStream committed through this->SaveFrom (retried), or nullptr
  // (the pack is built in memory) when no temp file can be made.
  std::unique_ptr<PackStream> NewPackStream() override;
  int Connections() const override { return inner_->Connections(); }
  bool RoundTrips() const override { return inner_->RoundTrips(); }
  size_t RemoveStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->RemoveStaleTempFiles(min_age_seconds);
  }
  size_t CountStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->CountStaleTempFiles(min_age_seconds);
  }

  // The delay before attempt `failed_attempt + 1`, before jitter.
  std::chrono::milliseconds DelayAfter(int failed_attempt) const;

 private:
  // Runs op(attempt) until it returns, or throws an error that must not be retried.
  template <typename Op>
  auto Run(const std::string& what, Op&& op, bool retry_corrupt_once = false);

  const std::shared_ptr<Backend> inner_;
  const RetryOptions options_;
};

}  // namespace haven
