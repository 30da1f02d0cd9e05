#include "backend/rate_limiter.h"

#include <algorithm>
#include <cstdint>
#include <thread>

namespace haven {

RateLimiter::RateLimiter(uint64_t bytes_per_second)
    : rate_(static_cast<double>(bytes_per_second)), tokens_(rate_), last_(Clock::now()) {}

void RateLimiter::Take(uint64_t bytes) {
  double wait_s;
  {
    MutexLock lk(mu_);
    Clock::time_point now = Clock::now();
    tokens_ = std::min(rate_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
    last_ = now;
    // Pay now; a negative balance is the time this caller (and the next ones) must wait.
    tokens_ -= static_cast<double>(bytes);
    wait_s = tokens_ < 0 ? -tokens_ / rate_ : 0;
  }
  if (wait_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
}

namespace {
thread_local UploadPacing* current_pacing = nullptr;
}  // namespace

UploadPacing::UploadPacing(RateLimiter& limiter) : limiter_(limiter), outer_(current_pacing) {
  current_pacing = this;
}

UploadPacing::~UploadPacing() { current_pacing = outer_; }

void UploadPacing::PayRest(uint64_t total) {
  if (total > paid_) {
    limiter_.Take(total - paid_);
    paid_ = total;
  }
}

uint64_t UploadPieceLimit() {
  UploadPacing* p = current_pacing;
  if (!p) return UINT64_MAX;
  return std::max<uint64_t>(1024, static_cast<uint64_t>(p->limiter_.rate() / 8));
}

void PayUploadBytes(uint64_t n) {
  UploadPacing* p = current_pacing;
  if (!p || n == 0) return;
  p->limiter_.Take(n);
  p->paid_ += n;
}

}  // namespace haven
