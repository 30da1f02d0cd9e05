// restic's --limit-upload / --limit-download: a decorator that keeps the bytes saved and
// the bytes loaded under a rate (KiB/s, 0 = unlimited) with one token bucket per
// direction, shared by every thread. A transfer larger than the bucket is let through in
// pieces of time: it waits until its bytes are paid for, so the average over a second or
// two stays at the limit; the first second's worth passes at once (the bucket starts full).
#pragma once

#include <chrono>
#include <memory>

#include "backend/forwarding_backend.h"
#include "core/mutex.h"

namespace haven {

// A token bucket of `rate` bytes per second, holding at most one second of tokens.
class RateLimiter {
 public:
  explicit RateLimiter(uint64_t bytes_per_second);
  // Blocks until `bytes` may pass.
  void Take(uint64_t bytes) EXCLUDES(mu_);

 private:
  using Clock = std::chrono::steady_clock;
  const double rate_;
  Mutex mu_;
  double tokens_ GUARDED_BY(mu_);
  Clock::time_point last_ GUARDED_BY(mu_);
};

class LimitBackend : public ForwardingBackend {
 public:
  // Rates in KiB/s (restic's unit); 0 leaves that direction unlimited.
  LimitBackend(std::shared_ptr<Backend> inner, uint64_t upload_kib, uint64_t download_kib);

  void Save(const Handle& h, ByteView data) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override;

 private:
  std::unique_ptr<RateLimiter> up_, down_;
};

}  // namespace haven
