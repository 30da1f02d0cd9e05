// Reading the parts of one object that a caller needs (restore's and prune's pack reads):
// `CoalesceExtents` joins extents separated by holes up to a limit into one range, so a
// pack read over a slow link costs one ranged GET per run of wanted blobs instead of one
// per blob, and `RangeReader` loads the independent ranges of an object in parallel on
// its own I/O threads, handing them to the caller in order (issue 16: a hole is cheaper
// to download than a round trip, a big hole is not).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "core/bytes.h"
#include "core/error.h"
#include "core/huge_buffer.h"
#include "core/mutex.h"
#include "core/thread_pool.h"

namespace haven {

// Bytes [offset, offset + length) of an object; `first`..`last` (exclusive): the extents
// a coalesced range covers.
struct ByteRange {
  uint64_t offset = 0, length = 0;
  size_t first = 0, last = 0;
  uint64_t end() const { return offset + length; }
};

// The holes restore and prune read through rather than split a range at (the seed's
// 4 MiB), and where they start a new range (memory per read).
inline constexpr uint64_t kMaxRangeHole = 4 << 20;
inline constexpr uint64_t kMaxRangeSpan = 16 << 20;

// How a reader of a pack's parts splits them into requests, by what a request costs. Where
// every request is a round trip (Backend::RoundTrips): the holes and spans above (one GET
// per run of wanted blobs). On a local disk a request is a system call: holes over
// 256 KiB split a range and a range stops at 2 MiB, so the buffers a reader holds (its
// window: two ranges) stay small. Used by prune's repack (B7: 16 MiB ranges were 67 MiB of
// its peak RSS); restore still reads 16 MiB ranges everywhere (not measured with these).
struct RangeLimits {
  uint64_t max_hole, max_span;
  uint64_t window() const { return 2 * max_span; }
  static RangeLimits For(const Backend& be) {
    if (be.RoundTrips()) return {kMaxRangeHole, kMaxRangeSpan};
    return {256 << 10, 2 << 20};
  }
};

// Groups extents, given by `extent(i)` for i in [0, n) sorted by offset (they may overlap
// or repeat), into ranges: the next extent joins the current range when the hole before
// it is at most `max_hole` and it starts within `max_span` bytes of the range's start. A
// range is thus at most max_span plus one extent long: a pack a little over 16 MiB (the
// last blob crosses the pack size) is one request, not 16 MiB and a tail read after it.
std::vector<ByteRange> CoalesceExtents(size_t n, const std::function<ByteRange(size_t)>& extent,
                                       uint64_t max_hole = kMaxRangeHole,
                                       uint64_t max_span = kMaxRangeSpan);

// Streams range `r` of h (Backend::LoadStream) and hands each of its extents over as soon
// as its bytes have all arrived: consume(first, last, bytes) for each run [first, last) of
// extents with the same offset and length (r.first <= first < last <= r.last), in order,
// with their bytes, which the consumer may change (decrypt in place) and which are valid
// during the call only. `extent(i)` gives extent i, sorted by offset (they may overlap).
// Holds one extent and one piece of the stream at a time, not the range: a restore over a
// network keeps a blob per worker in memory, not a 16 MiB range (W2's peak RSS). Holes
// between extents are skipped as they stream by. A load error is thrown after the
// extents that arrived complete were handed over; `*handed` (when given) is then the first
// extent not handed over. What consume throws ends the read and is rethrown.
void StreamExtents(Backend& backend, const Handle& h, const ByteRange& r,
                   const std::function<ByteRange(size_t)>& extent,
                   const std::function<void(size_t first, size_t last, std::span<uint8_t> bytes)>& consume,
                   size_t* handed = nullptr);

class RangeReader {
 public:
  // The bytes of range i, or the error its load threw (bytes empty then).
  using Consumer =
      std::function<void(size_t i, std::span<uint8_t> bytes, const Error* error)>;

  // `threads`: I/O threads shared by every Read. `window`: the most bytes one Read has
  // loaded or loading ahead of the range it hands over (at least the next range).
  RangeReader(Backend& backend, int threads, uint64_t window = 2 * kMaxRangeSpan);

  // Loads `ranges` of `h` and calls consume(i, ...) for each, in order, on the calling
  // thread. A single range is loaded on the calling thread; more are loaded on the I/O
  // threads, several at once within the window. The bytes are valid during the call only
  // (buffers are reused). Load errors (`Error`) go to the consumer; anything the
  // consumer throws is rethrown once the loads still running have ended.
  // Safe to call from several threads at once.
  void Read(const Handle& h, std::span<const ByteRange> ranges, const Consumer& consume);

  // Runs stream(i) for each of n ranges of one object, the first on the calling thread and
  // the others on the I/O threads, all at once (each streams its range with StreamExtents,
  // holding a blob, not the range: no window), and returns when every one has ended; then
  // the first exception is rethrown. Safe to call from several threads at once.
  void ForEachRange(size_t n, const std::function<void(size_t i)>& stream);

  // For tests: the most loads that were running at one time.
  int peak_in_flight() const;

 private:
  struct Slot;
  using Buffer = std::unique_ptr<HugeBuffer>;
  Buffer TakeBuffer() EXCLUDES(mu_);
  void GiveBuffer(Buffer b) EXCLUDES(mu_);
  void LoadSlot(const Handle& h, const ByteRange& r, Slot& slot) EXCLUDES(mu_);

  Backend& backend_;
  const uint64_t window_;
  mutable Mutex mu_;
  // Buffers that only grow, reused: never zero-filled, and grown by a quarter more than
  // asked (a range a little larger than the last does not map and fault in a new one).
  std::vector<Buffer> free_ GUARDED_BY(mu_);
  int in_flight_ GUARDED_BY(mu_) = 0;
  int peak_ GUARDED_BY(mu_) = 0;
  ThreadPool pool_;  // last: its destructor joins the workers before the rest goes
};

}  // namespace haven
