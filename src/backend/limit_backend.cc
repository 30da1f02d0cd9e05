#include "backend/limit_backend.h"

namespace haven {

LimitBackend::LimitBackend(std::shared_ptr<Backend> inner, uint64_t upload_kib,
                           uint64_t download_kib)
    : ForwardingBackend(std::move(inner)) {
  if (upload_kib) up_ = std::make_unique<RateLimiter>(upload_kib * 1024);
  if (download_kib) down_ = std::make_unique<RateLimiter>(download_kib * 1024);
}

void LimitBackend::Save(const Handle& h, ByteView data) {
  if (!up_) return inner_->Save(h, data);
  UploadPacing pacing(*up_);
  inner_->Save(h, data);
  pacing.PayRest(data.size());
}

void LimitBackend::SaveFrom(const Handle& h, const SaveSource& src) {
  if (!up_) return inner_->SaveFrom(h, src);
  UploadPacing pacing(*up_);
  inner_->SaveFrom(h, src);
  pacing.PayRest(src.size);
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
