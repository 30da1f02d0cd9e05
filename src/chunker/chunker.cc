#include "chunker/chunker.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <utility>

#include "chunker/polynomial.h"
#include "core/error.h"

namespace haven::chunker {

namespace {

// Bytes of a chunk that are skipped unhashed: the first cut test (at kMinSize) only sees the
// 64 bytes before it.
constexpr size_t kSkip = kMinSize - kWindowSize;
constexpr ptrdiff_t kWindow = kWindowSize;

// Slides in[i] into `digest` (out[i] leaving) for i = 0, 1, ... and stops after the first byte
// whose digest matches kSplitMask: returns its index, or n if none matches. One chain; used for
// short stretches (long ones go through ScanLanes).
inline size_t ScanToMatch(const Tables& t, uint64_t& digest, const uint8_t* in, const uint8_t* out,
                          size_t n) {
  const uint64_t* out_table = t.out_table();
  const uint64_t* mod_table = t.mod_table();
  const int shift = t.shift();
  uint64_t d = digest;
  size_t i = 0;
  for (; i < n; ++i) {
    d ^= out_table[out[i]];
    d = ((d << 8) | in[i]) ^ mod_table[d >> shift];
    if ((d & kSplitMask) == 0) break;
  }
  digest = d;
  return i;
}

// Fingerprint of the 64 bytes end[-64..-1] (slid in from an empty window).
inline uint64_t WarmUp(const Tables& t, const uint8_t* end) {
  uint64_t d = 0;
  for (const uint8_t* q = end - kWindowSize; q < end; ++q) d = t.Slide(d, 0, *q);
  return d;
}

// One digest chain is latency-bound (shift -> table load -> xor per byte), so kLanes independent
// windows are slid in lockstep to keep the core busy.
constexpr int kLanes = 4;

// Lane j slides p[j][i..len); p[j][-64..-1] must be readable and digest[j] the fingerprint of
// the window ending just before p[j][i]. Stops at the first index where some lane's window
// matches kSplitMask: returns the mask of matching lanes (bit j = lane j), with i at that index
// and every digest updated through it. Returns 0 with i == len if no lane matched. (Matches
// leave the loop instead of calling out, so the digests stay in registers.)
inline unsigned ScanLanes(const Tables& t, const uint8_t* const (&p)[kLanes], size_t& i, size_t len,
                          uint64_t (&digest)[kLanes]) {
  const uint64_t* out_table = t.out_table();
  const uint64_t* mod_table = t.mod_table();
  const int shift = t.shift();
  auto slide = [&](uint64_t d, const uint8_t* q, size_t k) {
    d ^= out_table[q[static_cast<ptrdiff_t>(k) - kWindow]];
    return ((d << 8) | q[k]) ^ mod_table[d >> shift];
  };
  uint64_t d[kLanes];
  for (int j = 0; j < kLanes; ++j) d[j] = digest[j];
  size_t k = i;
  int hit = 0;
  for (; k < len; ++k) {
#pragma GCC unroll 8
    for (int j = 0; j < kLanes; ++j) {
      d[j] = slide(d[j], p[j], k);
      if ((d[j] & kSplitMask) == 0) [[unlikely]] {
        hit = j;
        goto matched;
      }
    }
  }
  for (int j = 0; j < kLanes; ++j) digest[j] = d[j];
  i = k;
  return 0;
matched:
  for (int j = hit + 1; j < kLanes; ++j) d[j] = slide(d[j], p[j], k);
  unsigned mask = 0;
  for (int j = 0; j < kLanes; ++j) {
    digest[j] = d[j];
    if ((d[j] & kSplitMask) == 0) mask |= 1u << j;
  }
  i = k;
  return mask;
}

// Lane length of a FindFirstMatch block: up to kLaneBytes (a match wastes at most the rest of
// its block), at least kMinLaneBytes (each lane after the first re-hashes 64 bytes to warm up).
constexpr size_t kLaneBytes = 16 * 1024;
constexpr size_t kMinLaneBytes = 256;

// Index of the first i in [0, n) whose window (ending with in[i]) matches kSplitMask, or n.
// in[-64..-1] must be readable and `digest` their fingerprint; when n is returned, `digest` is
// the fingerprint of the window ending at in[n-1] (otherwise it is unspecified).
inline size_t FindFirstMatch(const Tables& t, const uint8_t* in, size_t n, uint64_t& digest) {
  constexpr size_t kNone = SIZE_MAX;
  size_t done = 0;
  while (n - done >= kLanes * kMinLaneBytes) {
    const size_t len = std::min(kLaneBytes, (n - done) / kLanes);
    const uint8_t* p[kLanes];
    uint64_t d[kLanes];
    for (int j = 0; j < kLanes; ++j) {
      p[j] = in + done + j * len;
      d[j] = j == 0 ? digest : WarmUp(t, p[j]);
    }
    size_t first[kLanes];
    std::fill_n(first, kLanes, kNone);
    for (size_t i = 0; i < len && first[0] == kNone; ++i) {
      const unsigned mask = ScanLanes(t, p, i, len, d);
      for (int j = 0; j < kLanes; ++j)
        if ((mask >> j & 1) && first[j] == kNone) first[j] = i;
    }
    for (int j = 0; j < kLanes; ++j)
      if (first[j] != kNone) return done + j * len + first[j];
    digest = d[kLanes - 1];
    done += kLanes * len;
  }
  return done + ScanToMatch(t, digest, in + done, in + done - kWindowSize, n - done);
}

// Appends candidate end positions [first, last] (after every run so far), merging adjacent runs.
void AddRun(std::vector<CandidateRun>& runs, size_t first, size_t last) {
  if (!runs.empty() && runs.back().last + 1 == first) {
    runs.back().last = last;
  } else {
    runs.push_back({first, last});
  }
}

void AppendRuns(std::vector<CandidateRun>& runs, const std::vector<CandidateRun>& more) {
  for (const CandidateRun& r : more) AddRun(runs, r.first, r.last);
}

// Candidates among end positions p = i + 1 for bytes i in [a, b), all hashed; requires a >= 64.
void HashRange(const Tables& t, const uint8_t* data, size_t a, size_t b,
               std::vector<CandidateRun>& runs) {
  if (a >= b) return;
  // kLanes equal lanes, then the remainder continues the last lane's chain.
  const size_t len = (b - a) / kLanes;
  const uint8_t* p[kLanes];
  uint64_t d[kLanes];
  std::vector<CandidateRun> lane_runs[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    p[j] = data + a + j * len;
    d[j] = WarmUp(t, p[j]);
  }
  for (size_t i = 0; i < len; ++i) {
    const unsigned mask = ScanLanes(t, p, i, len, d);
    for (int j = 0; j < kLanes; ++j) {
      const size_t end = static_cast<size_t>(p[j] - data) + i + 1;
      if (mask >> j & 1) AddRun(lane_runs[j], end, end);
    }
  }
  uint64_t tail = d[kLanes - 1];
  for (size_t i = a + kLanes * len; i < b;) {
    const size_t k = ScanToMatch(t, tail, data + i, data + i - kWindowSize, b - i);
    if (k == b - i) break;
    AddRun(lane_runs[kLanes - 1], i + k + 1, i + k + 1);
    i += k + 1;
  }
  for (const auto& lr : lane_runs) AppendRuns(runs, lr);
}

// Zero runs are the one common input where nearly every position is a candidate (an all-zero
// window fingerprints to 0); runs this long are recognised without hashing.
constexpr size_t kLongZeroRun = 4096;
// Bytes searched for a zero run before they are hashed (so they are still in cache).
constexpr size_t kPiece = 256 * 1024;

bool ZeroBlock(const uint8_t* q) {
  uint64_t w[8];
  std::memcpy(w, q, sizeof(w));
  if (w[0] != 0) return false;  // the usual answer, decided by one load
  return (w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7]) == 0;
}

// The first maximal run of >= kLongZeroRun zero bytes within [from, limit) that has a 64-aligned
// all-zero block starting before `search_end`; {limit, limit} if there is none.
std::pair<size_t, size_t> FindLongZeroRun(const uint8_t* data, size_t from, size_t search_end,
                                          size_t limit) {
  for (size_t q = (from + 63) & ~size_t{63}; q < search_end && q + 64 <= limit;) {
    if (!ZeroBlock(data + q)) {
      q += 64;
      continue;
    }
    size_t zs = q;
    while (zs > from && data[zs - 1] == 0) --zs;
    size_t ze = q + 64;
    while (ze + 64 <= limit && ZeroBlock(data + ze)) ze += 64;
    while (ze < limit && data[ze] == 0) ++ze;
    if (ze - zs >= kLongZeroRun) return {zs, ze};
    q = (ze + 63) & ~size_t{63};
  }
  return {limit, limit};
}

// Candidates among end positions p = i + 1 for bytes i in [a, b); requires a >= 63.
void ScanSegment(const Tables& t, ByteView all, size_t a, size_t b,
                 std::vector<CandidateRun>& runs) {
  const uint8_t* data = all.data();
  if (a < kWindowSize && a < b) {  // a == 63: the first full window ends with byte 63
    uint64_t d = 0;
    for (size_t i = 0; i <= a; ++i) d = t.Slide(d, 0, data[i]);
    if ((d & kSplitMask) == 0) AddRun(runs, a + 1, a + 1);
    ++a;
  }
  for (size_t pos = a; pos < b;) {
    const size_t piece_end = std::min(b, pos + kPiece);
    const auto [zs, ze] = FindLongZeroRun(data, pos, piece_end, b);
    if (zs == b) {
      HashRange(t, data, pos, piece_end, runs);
      pos = piece_end;
      continue;
    }
    // Windows ending in the run's first 63 bytes still hold earlier bytes: hash those; every
    // window inside the run (end positions zs+64 .. ze) is all zero, so a candidate.
    HashRange(t, data, pos, zs + kWindowSize - 1, runs);
    AddRun(runs, zs + kWindowSize, ze);
    pos = ze;
  }
}

}  // namespace

Tables::Tables(uint64_t polynomial) : polynomial_(polynomial) {
  const int deg = Degree(polynomial);
  if (deg < 8 || deg > 53)
    Fail(ErrorCode::kInvalidArgument,
         "chunker: polynomial degree " + std::to_string(deg) + " outside 8..53");
  shift_ = deg - 8;
  // x^(8·63) mod P: the weight of the oldest byte in a 64-byte window.
  Polynomial oldest = 1;
  for (size_t i = 0; i < 8 * (kWindowSize - 1); ++i) oldest = MulMod(oldest, 2, polynomial);
  for (uint64_t b = 0; b < 256; ++b) {
    out_[b] = MulMod(b, oldest, polynomial);
    mod_[b] = Mod(b << deg, polynomial) | (b << deg);
  }
}

uint64_t Tables::Fingerprint(ByteView window) const {
  if (window.size() > kWindowSize) window = window.last(kWindowSize);
  uint64_t f = 0;
  for (uint8_t b : window) f = Mod((f << 8) | b, polynomial_);
  return f;
}

Chunker::Chunker(const Tables& t) : t_(&t) {}

void Chunker::Reset() {
  count_ = 0;
  digest_ = 0;
  window_.fill(0);
  wpos_ = 0;
}

std::optional<size_t> Chunker::Next(ByteView data) {
  const uint8_t* p = data.data();
  const size_t n = data.size();
  size_t pos = 0;
  if (count_ < kSkip) {
    pos = static_cast<size_t>(std::min<uint64_t>(kSkip - count_, n));
    count_ += pos;
  }
  // The first 64 hashed bytes of this call: the leaving bytes come from the saved window.
  uint64_t d = digest_;
  const size_t ring_end = std::min(n, pos + kWindowSize);
  for (; pos < ring_end; ++pos) {
    d = t_->Slide(d, window_[wpos_], p[pos]);
    window_[wpos_] = p[pos];
    wpos_ = (wpos_ + 1) % kWindowSize;
    ++count_;
    if (count_ >= kMinSize && ((d & kSplitMask) == 0 || count_ >= kMaxSize)) {
      Reset();
      return pos + 1;
    }
  }
  if (pos == n) {
    digest_ = d;
    return std::nullopt;
  }
  // From here the leaving bytes are in `data`, and count_ >= kMinSize (>= 64 bytes hashed).
  const size_t limit = static_cast<size_t>(std::min<uint64_t>(n - pos, kMaxSize - count_));
  const size_t k = FindFirstMatch(*t_, p + pos, limit, d);
  if (k < limit) {
    Reset();
    return pos + k + 1;
  }
  pos += limit;
  count_ += limit;
  if (count_ >= kMaxSize) {
    Reset();
    return pos;
  }
  std::memcpy(window_.data(), p + n - kWindowSize, kWindowSize);
  wpos_ = 0;
  digest_ = d;
  return std::nullopt;
}

std::vector<size_t> ChunkLengths(const Tables& t, ByteView all) {
  std::vector<size_t> lengths;
  lengths.reserve(all.size() / kMinSize + 1);
  Chunker chunker(t);
  while (!all.empty()) {
    const std::optional<size_t> cut = chunker.Next(all);
    if (!cut) break;
    lengths.push_back(*cut);
    all = all.subspan(*cut);
  }
  if (chunker.chunk_length() > 0) lengths.push_back(chunker.chunk_length());
  return lengths;
}

std::vector<CandidateRun> CutCandidates(const Tables& t, ByteView all, size_t from, int threads) {
  from = std::max(from, kWindowSize);
  if (from > all.size()) return {};
  // Bytes [first, all.size()) end the candidate windows; split them into equal segments.
  const size_t first = from - 1;
  const size_t total = all.size() - first;
  constexpr size_t kMinSegment = 16 * 1024;
  const size_t segments = std::clamp<size_t>(total / kMinSegment, 1, std::max(threads, 1));
  std::vector<std::vector<CandidateRun>> found(segments);
  std::vector<std::exception_ptr> errors(segments);
  auto scan = [&](size_t s) {
    try {
      ScanSegment(t, all, first + total * s / segments, first + total * (s + 1) / segments,
                  found[s]);
    } catch (...) {
      errors[s] = std::current_exception();  // e.g. bad_alloc; rethrown on the caller's thread
    }
  };
  {
    std::vector<std::jthread> workers;
    workers.reserve(segments - 1);
    for (size_t s = 1; s < segments; ++s) workers.emplace_back(scan, s);
    scan(0);
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<CandidateRun> runs = std::move(found[0]);
  for (size_t s = 1; s < segments; ++s) AppendRuns(runs, found[s]);
  return runs;
}

std::vector<size_t> ChunkLengthsParallel(const Tables& t, ByteView all, int threads) {
  if (threads <= 1 || all.size() <= kMinSize) return ChunkLengths(t, all);
  const std::vector<CandidateRun> runs = CutCandidates(t, all, kMinSize, threads);
  std::vector<size_t> lengths;
  lengths.reserve(all.size() / kMinSize + 1);
  size_t r = 0;
  for (size_t start = 0; start < all.size();) {
    const size_t earliest = start + kMinSize;
    const size_t latest = std::min(start + kMaxSize, all.size());
    while (r < runs.size() && runs[r].last < earliest) ++r;
    size_t end = latest;
    if (r < runs.size()) end = std::min(end, std::max(runs[r].first, earliest));
    lengths.push_back(end - start);
    start = end;
  }
  return lengths;
}

}  // namespace haven::chunker
