// A free list of HugeBuffers shared by threads, so that a stream of large pieces (a big
// file's chunks, a file's blobs loaded ahead) reuses the same few mappings instead of
// mapping, faulting in and unmapping fresh memory per piece.
//
// Take() hands out a kept buffer or a new one of `Limits::bytes` (0: empty, its user grows
// it). Put() keeps at most `Limits::max_kept` buffers (as many as were ever in use at once,
// up to that); of a kept mapped buffer that held more than `Limits::resident` bytes, the
// pages past that go back to the OS (a later long piece pays their page faults again, and
// the peak RSS stays bounded). Share() wraps a buffer so that it returns to the pool when
// its last user drops it.
//
// Thread safety: every method may be called from several threads. The pool must outlive
// every buffer it has shared.
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include "core/huge_buffer.h"
#include "core/mutex.h"

namespace haven {

class HugeBufferPool {
 public:
  struct Limits {
    size_t bytes = 0;
    size_t max_kept = std::numeric_limits<size_t>::max();
    size_t resident = std::numeric_limits<size_t>::max();
  };
  HugeBufferPool() : limits_() {}
  explicit HugeBufferPool(Limits limits) : limits_(limits) {}
  HugeBufferPool(const HugeBufferPool&) = delete;
  HugeBufferPool& operator=(const HugeBufferPool&) = delete;

  std::unique_ptr<HugeBuffer> Take() EXCLUDES(mu_);
  // `touched`: how many bytes from the start the buffer has held (unknown: its size).
  void Put(std::unique_ptr<HugeBuffer> b,
           size_t touched = std::numeric_limits<size_t>::max()) EXCLUDES(mu_);
  std::shared_ptr<HugeBuffer> Share(std::unique_ptr<HugeBuffer> b,
                                    size_t touched = std::numeric_limits<size_t>::max());

  size_t kept() const EXCLUDES(mu_);

 private:
  const Limits limits_;
  mutable Mutex mu_;
  std::vector<std::unique_ptr<HugeBuffer>> free_ GUARDED_BY(mu_);
};

}  // namespace haven
