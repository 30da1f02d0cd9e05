#include "backend/range_reader.h"

#include <algorithm>
#include <exception>
#include <future>
#include <memory>
#include <utility>

#include "core/timings.h"

namespace haven {

std::vector<ByteRange> CoalesceExtents(size_t n, const std::function<ByteRange(size_t)>& extent,
                                       uint64_t max_hole, uint64_t max_span) {
  std::vector<ByteRange> out;
  size_t i = 0;
  while (i < n) {
    const ByteRange first = extent(i);
    ByteRange r{first.offset, first.length, i, i + 1};
    uint64_t end = first.end();
    for (size_t j = i + 1; j < n; j++) {
      const ByteRange e = extent(j);
      if (e.offset > end + max_hole || e.offset - r.offset >= max_span) break;
      end = std::max(end, e.end());
      r.last = j + 1;
    }
    r.length = end - r.offset;
    out.push_back(r);
    i = r.last;
  }
  return out;
}

struct RangeReader::Slot {
  Bytes buf;
  std::exception_ptr error;
  std::future<void> done;
};

RangeReader::RangeReader(Backend& backend, int threads, uint64_t window)
    : backend_(backend), window_(window), pool_(std::max(1, threads), 1024) {}

Bytes RangeReader::TakeBuffer() {
  MutexLock lock(mu_);
  if (free_.empty()) return {};
  Bytes b = std::move(free_.back());
  free_.pop_back();
  return b;
}

void RangeReader::GiveBuffer(Bytes b) {
  MutexLock lock(mu_);
  // Enough for every I/O thread and a reader each; more are freed.
  if (free_.size() < 2 * static_cast<size_t>(pool_.size())) free_.push_back(std::move(b));
}

void RangeReader::LoadSlot(const Handle& h, const ByteRange& r, Slot& slot) {
  {
    MutexLock lock(mu_);
    peak_ = std::max(peak_, ++in_flight_);
  }
  try {
    ScopedTimer t(Stage::kLoad);
    // Grown only: no zero-fill and page faults per read once the buffer is large enough.
    if (slot.buf.size() < r.length) slot.buf.resize(r.length);
    backend_.LoadInto(h, r.offset, std::span<uint8_t>(slot.buf.data(), r.length));
  } catch (...) {
    slot.error = std::current_exception();
  }
  MutexLock lock(mu_);
  --in_flight_;
}

int RangeReader::peak_in_flight() const {
  MutexLock lock(mu_);
  return peak_;
}

namespace {

// Calls consume with the slot's bytes, or with its load's error.
void Hand(size_t i, const ByteRange& r, Bytes& buf, const std::exception_ptr& error,
          const RangeReader::Consumer& consume) {
  if (!error) {
    consume(i, std::span<uint8_t>(buf.data(), r.length), nullptr);
    return;
  }
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    consume(i, {}, &e);
  }
}

}  // namespace

void RangeReader::Read(const Handle& h, std::span<const ByteRange> ranges,
                       const Consumer& consume) {
  if (ranges.empty()) return;
  if (ranges.size() == 1) {
    Slot slot;
    slot.buf = TakeBuffer();
    LoadSlot(h, ranges[0], slot);
    Hand(0, ranges[0], slot.buf, slot.error, consume);
    GiveBuffer(std::move(slot.buf));
    return;
  }
  std::vector<std::unique_ptr<Slot>> slots(ranges.size());
  size_t next = 0;       // the next range to start loading
  uint64_t ahead = 0;    // bytes of the ranges started and not yet handed over
  // Whatever happens, no load may outlive the slots it writes into.
  struct Drain {
    std::vector<std::unique_ptr<Slot>>& slots;
    ~Drain() {
      for (auto& s : slots)
        if (s && s->done.valid()) s->done.wait();
    }
  } drain{slots};
  for (size_t i = 0; i < ranges.size(); i++) {
    while (next < ranges.size() && (next == i || ahead + ranges[next].length <= window_)) {
      auto slot = std::make_unique<Slot>();
      slot->buf = TakeBuffer();
      Slot* s = slot.get();
      const ByteRange r = ranges[next];
      slots[next] = std::move(slot);
      s->done = pool_.Submit([this, &h, r, s] { LoadSlot(h, r, *s); });
      ahead += r.length;
      next++;
    }
    Slot& s = *slots[i];
    s.done.get();
    Hand(i, ranges[i], s.buf, s.error, consume);
    ahead -= ranges[i].length;
    GiveBuffer(std::move(s.buf));
    slots[i].reset();
  }
}

}  // namespace haven
