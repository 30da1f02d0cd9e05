// The rate of --limit-upload / --limit-download: a token bucket shared by every thread, and
// the upload pacing that lets a transport pay for a body's bytes as it sends them.
//
//   RateLimiter up(4000 * 1024);      // bytes per second
//   {
//     UploadPacing pacing(up);        // this thread's uploads pay into `up` until scope end
//     backend.Save(h, data);          // HttpClient / SFTP call PayUploadBytes(n) per piece
//     pacing.PayRest(data.size());    // what no transport paid (a local file), after success
//   }
//
// Why per piece and not per call: a Save that fails before its body goes out (the server
// is gone, the connection is refused) must not wait for bytes it never sent, or every
// retry of a 16 MiB pack under a small limit would sleep for the whole pack.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/mutex.h"

namespace haven {

// A token bucket of `rate` bytes per second, holding at most one second of tokens. A
// transfer larger than the bucket is let through in pieces of time: it waits until its
// bytes are paid for, so the average over a second or two stays at the rate; the first
// second's worth passes at once (the bucket starts full).
class RateLimiter {
 public:
  explicit RateLimiter(uint64_t bytes_per_second);
  // Blocks until `bytes` may pass.
  void Take(uint64_t bytes) EXCLUDES(mu_);
  double rate() const { return rate_; }

 private:
  using Clock = std::chrono::steady_clock;
  const double rate_;
  Mutex mu_;
  double tokens_ GUARDED_BY(mu_);
  Clock::time_point last_ GUARDED_BY(mu_);
};

// While alive, upload bytes sent by the creating thread are paid into `limiter` (nests:
// the innermost one pays). Not copyable; create and destroy on one thread.
class UploadPacing {
 public:
  explicit UploadPacing(RateLimiter& limiter);
  ~UploadPacing();
  UploadPacing(const UploadPacing&) = delete;
  UploadPacing& operator=(const UploadPacing&) = delete;

  // Bytes paid so far through PayUploadBytes.
  uint64_t paid() const { return paid_; }
  // Pays what is still owed of `total` bytes (total - paid(), when positive).
  void PayRest(uint64_t total);

 private:
  friend void PayUploadBytes(uint64_t n);
  friend uint64_t UploadPieceLimit();
  RateLimiter& limiter_;
  UploadPacing* const outer_;
  uint64_t paid_ = 0;
};

// Called by a transport on the caller's thread just before it sends `n` body bytes: waits
// as the current UploadPacing's limiter asks; does nothing when no pacing is in effect.
void PayUploadBytes(uint64_t n);

// The most body bytes a transport should send (and pay) at once on this thread: an eighth
// of a second's worth at the current UploadPacing's rate, at least 1 KiB; no limit (the
// largest uint64_t) when no pacing is in effect. Paying in such pieces keeps every wait
// inside a request short: one 64 KiB piece at 4 KiB/s would leave the connection silent for
// 16 s, past the idle timeout after which S3 answers 400 RequestTimeout.
uint64_t UploadPieceLimit();

}  // namespace haven
