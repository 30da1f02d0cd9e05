#include "backend/range_reader.h"

#include <algorithm>
#include <chrono>
#include <cstring>
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
  std::unique_ptr<HugeBuffer> buf;
  std::exception_ptr error;
  std::future<void> done;
};

RangeReader::RangeReader(Backend& backend, int threads, uint64_t window)
    : backend_(backend), window_(window), pool_(std::max(1, threads), 1024) {}

RangeReader::Buffer RangeReader::TakeBuffer() {
  MutexLock lock(mu_);
  if (free_.empty()) return std::make_unique<HugeBuffer>();
  Buffer b = std::move(free_.back());
  free_.pop_back();
  return b;
}

void RangeReader::GiveBuffer(Buffer b) {
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
    // Grown only: no zero-fill, and no page faults once the buffer is large enough.
    if (slot.buf->size() < r.length) slot.buf->Grow(r.length + r.length / 4);
    backend_.LoadInto(h, r.offset, slot.buf->First(r.length));
  } catch (...) {
    slot.error = std::current_exception();
  }
  MutexLock lock(mu_);
  --in_flight_;
}

void StreamExtents(Backend& backend, const Handle& h, const ByteRange& r,
                   const std::function<ByteRange(size_t)>& extent,
                   const std::function<void(size_t, size_t, std::span<uint8_t>)>& consume,
                   size_t* handed) {
  size_t k = r.first;  // the next extent to hand over
  if (handed) *handed = k;
  if (k >= r.last) return;
  // buf[0, len) holds the stream's bytes [base, pos): from the next extent's start (or
  // less, while a hole streams by) to what has arrived. Grown only, per thread.
  thread_local Bytes buf;
  size_t len = 0;
  uint64_t base = r.offset, pos = r.offset;
  ByteRange next = extent(k);
  using Clock = std::chrono::steady_clock;
  Clock::duration consuming{};
  const Clock::time_point started = Clock::now();
  auto hand_over = [&] {
    while (k < r.last && next.end() <= pos) {
      size_t m = k + 1;
      ByteRange e;
      while (m < r.last && (e = extent(m)).offset == next.offset && e.length == next.length) m++;
      const Clock::time_point t0 = Clock::now();
      consume(k, m, std::span<uint8_t>(buf.data() + (next.offset - base), next.length));
      consuming += Clock::now() - t0;
      k = m;
      if (handed) *handed = k;
      if (k < r.last) next = extent(k);
    }
    // Bytes before the next extent are no longer needed.
    const uint64_t keep = k < r.last ? std::min(next.offset, pos) : pos;
    if (keep > base) {
      const size_t drop = static_cast<size_t>(keep - base);
      std::memmove(buf.data(), buf.data() + drop, len - drop);
      len -= drop;
      base = keep;
    }
  };
  backend.LoadStream(h, r.offset, r.length, [&](ByteView piece) {
    if (k < r.last && len == 0 && next.offset > pos) {  // a hole: skipped, not copied
      const size_t skip = static_cast<size_t>(std::min<uint64_t>(piece.size(), next.offset - pos));
      piece = piece.subspan(skip);
      pos += skip;
      base = pos;
    }
    if (piece.empty() || k >= r.last) {
      pos += piece.size();
      base = pos;
      return;
    }
    if (buf.size() < len + piece.size()) buf.resize(std::max(len + piece.size(), 2 * buf.size()));
    std::memcpy(buf.data() + len, piece.data(), piece.size());
    len += piece.size();
    pos += piece.size();
    hand_over();
  });
  if (Timings::Enabled()) Timings::Add(Stage::kLoad, Clock::now() - started - consuming);
  if (k < r.last)  // LoadStream delivers the whole range or throws: a backend's fault
    Fail(ErrorCode::kCorrupt, "load " + h.ToString() + ": the stream ended before " +
                                  std::to_string(r.end()));
}

void RangeReader::ForEachRange(size_t n, const std::function<void(size_t)>& stream) {
  std::vector<std::future<void>> others;
  others.reserve(n > 0 ? n - 1 : 0);
  std::exception_ptr first;
  try {
    for (size_t i = 1; i < n; i++) others.push_back(pool_.Submit([&stream, i] { stream(i); }));
    if (n > 0) stream(0);
  } catch (...) {
    first = std::current_exception();
  }
  for (auto& f : others) {  // none may outlive `stream`
    try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

int RangeReader::peak_in_flight() const {
  MutexLock lock(mu_);
  return peak_;
}

namespace {

// Calls consume with the slot's bytes, or with its load's error.
void Hand(size_t i, const ByteRange& r, HugeBuffer& buf, const std::exception_ptr& error,
          const RangeReader::Consumer& consume) {
  if (!error) {
    consume(i, buf.First(r.length), nullptr);
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
    Hand(0, ranges[0], *slot.buf, slot.error, consume);
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
    Hand(i, ranges[i], *s.buf, s.error, consume);
    ahead -= ranges[i].length;
    GiveBuffer(std::move(s.buf));
    slots[i].reset();
  }
}

}  // namespace haven
