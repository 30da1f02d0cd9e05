#include "core/huge_buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>

namespace haven {

std::unique_ptr<HugeBuffer> HugeBufferPool::Take() {
  {
    MutexLock lock(mu_);
    if (!free_.empty()) {
      std::unique_ptr<HugeBuffer> b = std::move(free_.back());
      free_.pop_back();
      return b;
    }
  }
  return limits_.bytes ? std::make_unique<HugeBuffer>(limits_.bytes) : std::make_unique<HugeBuffer>();
}

void HugeBufferPool::Put(std::unique_ptr<HugeBuffer> b, size_t touched) {
  if (!b) return;
  touched = std::min(touched, b->size());
  if (touched > limits_.resident && b->mapped())
    madvise(b->data() + limits_.resident, b->size() - limits_.resident, MADV_DONTNEED);
  MutexLock lock(mu_);
  if (free_.size() < limits_.max_kept) free_.push_back(std::move(b));
}

std::shared_ptr<HugeBuffer> HugeBufferPool::Share(std::unique_ptr<HugeBuffer> b, size_t touched) {
  return std::shared_ptr<HugeBuffer>(b.release(), [this, touched](HugeBuffer* p) {
    Put(std::unique_ptr<HugeBuffer>(p), touched);
  });
}

size_t HugeBufferPool::kept() const {
  MutexLock lock(mu_);
  return free_.size();
}

}  // namespace haven
