#include "backend/retry_backend.h"

#include <algorithm>
#include <exception>
#include <random>
#include <thread>
#include <unordered_set>
#include <utility>

#include "backend/spool_pack_stream.h"

namespace haven {
namespace {

// Carries an exception thrown by a List callback through Run, which must not retry it.
struct CallbackFailed {
  std::exception_ptr error;
};

std::chrono::milliseconds Jitter(std::chrono::milliseconds d) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> factor(0.5, 1.0);
  return std::chrono::milliseconds(
      static_cast<int64_t>(static_cast<double>(d.count()) * factor(rng)));
}

}  // namespace

RetryBackend::RetryBackend(std::shared_ptr<Backend> inner, RetryOptions options)
    : inner_(std::move(inner)), options_(std::move(options)) {}

std::chrono::milliseconds RetryBackend::DelayAfter(int failed_attempt) const {
  std::chrono::milliseconds d = options_.base_delay;
  for (int i = 1; i < failed_attempt && d < options_.max_delay; ++i) d *= 2;
  return std::min(d, options_.max_delay);
}

template <typename Op>
auto RetryBackend::Run(const std::string& what, Op&& op, bool retry_corrupt_once) {
  bool corrupt_retried = false;
  for (int attempt = 1;; ++attempt) {
    try {
      return op(attempt);
    } catch (const Error& e) {
      bool retry = e.retryable();
      if (!retry && retry_corrupt_once && !corrupt_retried && e.code() == ErrorCode::kCorrupt) {
        retry = true;
        corrupt_retried = true;
      }
      if (!retry) throw;
      if (attempt >= options_.max_attempts) {
        throw Error(
            e.code(),
            std::string(e.what()) + " (gave up after " + std::to_string(attempt) + " attempts)",
            e.retryable());
      }
      std::chrono::milliseconds delay = DelayAfter(attempt);
      if (options_.jitter) delay = Jitter(delay);
      if (options_.on_retry) options_.on_retry(what, e, attempt, delay);
      if (options_.sleep) {
        options_.sleep(delay);
      } else if (delay.count() > 0) {
        std::this_thread::sleep_for(delay);
      }
    }
  }
}

bool RetryBackend::Exists() {
  return Run("exists", [&](int) { return inner_->Exists(); });
}

void RetryBackend::Create() {
  Run("create", [&](int) { inner_->Create(); });
}

void RetryBackend::Save(const Handle& h, ByteView data) {
  Run("save " + h.ToString(), [&](int) { inner_->Save(h, data); });
}

void RetryBackend::SaveFrom(const Handle& h, const SaveSource& src) {
  Run("save " + h.ToString(), [&](int) { inner_->SaveFrom(h, src); });
}

std::unique_ptr<PackStream> RetryBackend::NewPackStream() {
  if (auto stream = inner_->NewPackStream()) return stream;
  if (!inner_->RoundTrips()) return nullptr;
  try {
    return std::make_unique<SpoolPackStream>(*this);
  } catch (const Error&) {
    return nullptr;  // no temp file ($TMPDIR unwritable, no descriptors): build it in memory
  }
}

Bytes RetryBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  return Run(
      "load " + h.ToString(), [&](int) { return inner_->Load(h, offset, length); },
      /*retry_corrupt_once=*/true);
}

void RetryBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  Run(
      "load " + h.ToString(), [&](int) { inner_->LoadInto(h, offset, out); },
      /*retry_corrupt_once=*/true);
}

void RetryBackend::LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                              const std::function<void(ByteView)>& sink) {
  uint64_t done = 0;  // bytes delivered: a retry resumes after them
  try {
    Run(
        "load " + h.ToString(),
        [&](int) {
          if (done == length) return;  // everything arrived before the failure
          inner_->LoadStream(h, offset + done, length - done, [&](ByteView piece) {
            done += piece.size();
            try {
              sink(piece);
            } catch (...) {
              throw CallbackFailed{std::current_exception()};
            }
          });
        },
        /*retry_corrupt_once=*/true);
  } catch (const CallbackFailed& f) {
    std::rethrow_exception(f.error);
  }
}

std::optional<uint64_t> RetryBackend::Stat(const Handle& h) {
  return Run("stat " + h.ToString(), [&](int) { return inner_->Stat(h); });
}

std::optional<int64_t> RetryBackend::ModTime(const Handle& h) {
  return Run("stat " + h.ToString(), [&](int) { return inner_->ModTime(h); });
}

void RetryBackend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  std::unordered_set<std::string> delivered;
  try {
    Run(std::string("list ") + FileTypeName(t), [&](int) {
      inner_->List(t, [&](const FileInfo& fi) {
        if (!delivered.insert(fi.name).second) return;
        try {
          fn(fi);
        } catch (...) {
          throw CallbackFailed{std::current_exception()};
        }
      });
    });
  } catch (const CallbackFailed& f) {
    std::rethrow_exception(f.error);
  }
}

void RetryBackend::Remove(const Handle& h) {
  Run("remove " + h.ToString(), [&](int attempt) {
    try {
      inner_->Remove(h);
    } catch (const Error& e) {
      if (attempt > 1 && e.code() == ErrorCode::kNotFound) return;
      throw;
    }
  });
}

}  // namespace haven
