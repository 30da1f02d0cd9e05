#include "repo/pack_uploader.h"

#include <utility>

namespace haven {

PackUploader::PackUploader(SaveFn save) : save_(std::move(save)) {}

Bytes PackUploader::TakeBuffer() {
  MutexLock lock(mu_);
  if (free_.empty()) return {};
  Bytes b = std::move(free_.back());
  free_.pop_back();
  return b;
}

void PackUploader::Upload(Bytes pack, std::vector<PackedBlob> blobs) {
  {
    MutexLock lock(mu_);
    while (pending_ >= static_cast<size_t>(kMaxUploads) && !error_) done_.Wait(mu_);
    if (error_) std::rethrow_exception(error_);
    pending_++;
  }
  pool_.Submit([this, pack = std::move(pack), blobs = std::move(blobs)]() mutable {
    Run(pack, std::move(blobs));
  });
}

void PackUploader::Run(Bytes& pack, std::vector<PackedBlob> blobs) {
  std::exception_ptr err;
  try {
    save_(pack, std::move(blobs));
    pack.clear();
  } catch (...) {
    err = std::current_exception();
  }
  MutexLock lock(mu_);
  if (!err && free_.size() < 2) free_.push_back(std::move(pack));
  if (err && !error_) error_ = err;
  --pending_;
  done_.NotifyAll();
}

void PackUploader::Wait() {
  MutexLock lock(mu_);
  while (pending_ > 0) done_.Wait(mu_);
  if (error_) std::rethrow_exception(error_);
}

}  // namespace haven
