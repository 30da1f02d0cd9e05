#include "backend/limit_backend.h"

#include <algorithm>
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

LimitBackend::LimitBackend(std::shared_ptr<Backend> inner, uint64_t upload_kib,
                           uint64_t download_kib)
    : ForwardingBackend(std::move(inner)) {
  if (upload_kib) up_ = std::make_unique<RateLimiter>(upload_kib * 1024);
  if (download_kib) down_ = std::make_unique<RateLimiter>(download_kib * 1024);
}

void LimitBackend::Save(const Handle& h, ByteView data) {
  if (up_) up_->Take(data.size());
  inner_->Save(h, data);
}

Bytes LimitBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  Bytes b = inner_->Load(h, offset, length);
  if (down_) down_->Take(b.size());
  return b;
}

void LimitBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  inner_->LoadInto(h, offset, out);
  if (down_) down_->Take(out.size());
}

void LimitBackend::LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                              const std::function<void(ByteView)>& sink) {
  if (!down_) return inner_->LoadStream(h, offset, length, sink);
  inner_->LoadStream(h, offset, length, [&](ByteView piece) {
    down_->Take(piece.size());  // paid as the bytes arrive, so the link is what is limited
    sink(piece);
  });
}

}  // namespace haven
