#include "core/huge_buffer.h"

#include <new>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace haven {

void HugeBuffer::Grow(size_t n) {
  if (n <= size_) return;
  Release();
#ifdef __linux__
  if (n >= kHugePage) {
    const size_t len = (n + kHugePage - 1) / kHugePage * kHugePage;
    // One huge page more than needed, then the unaligned head and tail are unmapped.
    void* raw = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start) munmap(raw, aligned - start);
    const size_t tail = start + len + kHugePage - (aligned + len);
    if (tail > 0) munmap(reinterpret_cast<void*>(aligned + len), tail);
    data_ = reinterpret_cast<uint8_t*>(aligned);
    size_ = len;
    mapped_ = len;
    // No MADV_HUGEPAGE: on the VMs this project runs on, a fresh transparent huge page is
    // taken from memory the host has reclaimed and costs up to 10x the 4 KiB faults it saves
    // (64 MiB: 213-437 ms with the hint, 28-42 ms without; `haven cat config` at scrypt
    // N=32768 r=8 p=4: mean 0.238 s, worst 1.33 s with it, 0.121 s and 0.14 s without).
    return;
  }
#endif
  data_ = static_cast<uint8_t*>(::operator new (n, std::align_val_t{64}));
  size_ = n;
}

void HugeBuffer::Release() {
  if (!data_) return;
#ifdef __linux__
  if (mapped_ > 0) {
    munmap(data_, mapped_);
  } else {
    ::operator delete (data_, std::align_val_t{64});
  }
#else
  ::operator delete (data_, std::align_val_t{64});
#endif
  data_ = nullptr;
  size_ = 0;
  mapped_ = 0;
}

}  // namespace haven
