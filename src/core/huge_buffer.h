// Large scratch memory that is neither value-initialised nor kept in the heap: from 2 MiB
// on it is mapped directly (2 MiB-aligned: huge pages where the system's THP setting is
// `always`, but not asked for with madvise: see huge_buffer.cc for why); smaller
// sizes come from operator new (64-byte aligned). Unmapped memory goes straight back to the
// OS, which zeroes it before any reuse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace haven {

class HugeBuffer {
 public:
  HugeBuffer() = default;
  explicit HugeBuffer(size_t bytes) { Grow(bytes); }
  ~HugeBuffer() { Release(); }
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;

  uint8_t* data() { return data_; }
  size_t size() const { return size_; }
  // True when the memory is a direct mapping (not from operator new).
  bool mapped() const { return mapped_ > 0; }

  // Makes size() at least n; when it must reallocate, the old contents are dropped (these
  // buffers are refilled after growing). Mapped sizes round up to 2 MiB.
  void Grow(size_t n);
  // The first n bytes, growing first.
  std::span<uint8_t> First(size_t n) {
    Grow(n);
    return {data_, n};
  }

  static constexpr size_t kHugePage = size_t{2} << 20;

 private:
  void Release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;
};

}  // namespace haven
