#include "chunker/chunker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include "chunker/polynomial.h"
#include "core/error.h"
#include "core/id.h"

namespace haven::chunker {
namespace {

constexpr uint64_t kTestPolynomial = 0x3DA3358B4DC173;

const Tables& TestTables() {
  static const Tables tables(kTestPolynomial);
  return tables;
}

Bytes RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(out.data() + i, &v, 8);
  }
  for (; i < n; ++i) out[i] = static_cast<uint8_t>(rng());
  return out;
}

// docs/format.md §11 input A: SHA-256(i as 8-byte little-endian), i = 0 .. 69999.
Bytes InputA() {
  Bytes out;
  out.reserve(70000 * 32);
  for (uint64_t i = 0; i < 70000; ++i) {
    uint8_t le[8];
    for (int k = 0; k < 8; ++k) le[k] = static_cast<uint8_t>(i >> (8 * k));
    const RawId h = Sha256(ByteView(le, 8));
    out.insert(out.end(), h.bytes.begin(), h.bytes.end());
  }
  return out;
}

// docs/format.md §11 input B: SHA-256("restic-vector-<i>"), i = 0 .. 655359.
Bytes InputB() {
  Bytes out;
  out.reserve(655360 * 32);
  for (int i = 0; i < 655360; ++i) {
    const RawId h = Sha256(AsBytes("restic-vector-" + std::to_string(i)));
    out.insert(out.end(), h.bytes.begin(), h.bytes.end());
  }
  return out;
}

struct ExpectedChunk {
  size_t start;
  size_t length;
  const char* sha256;
};

void ExpectChunks(ByteView all, const std::vector<size_t>& lengths,
                  const std::vector<ExpectedChunk>& expected) {
  ASSERT_EQ(lengths.size(), expected.size());
  size_t start = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    EXPECT_EQ(start, expected[i].start) << "chunk " << i;
    EXPECT_EQ(lengths[i], expected[i].length) << "chunk " << i;
    EXPECT_EQ(Sha256(all.subspan(start, lengths[i])).Hex(), expected[i].sha256) << "chunk " << i;
    start += lengths[i];
  }
  EXPECT_EQ(start, all.size());
}

// Feeds `all` to a streaming Chunker in pieces of piece() bytes; returns the chunk lengths.
std::vector<size_t> StreamLengths(const Tables& t, ByteView all,
                                  const std::function<size_t()>& piece) {
  Chunker chunker(t);
  std::vector<size_t> lengths;
  size_t current = 0;  // bytes of the unfinished chunk, as the caller counts them
  for (size_t pos = 0; pos < all.size();) {
    const size_t k = std::min(piece(), all.size() - pos);
    ByteView data = all.subspan(pos, k);
    while (!data.empty()) {
      const std::optional<size_t> cut = chunker.Next(data);
      if (!cut) {
        current += data.size();
        break;
      }
      EXPECT_GE(*cut, 1u);
      EXPECT_LE(*cut, data.size());
      current += *cut;
      lengths.push_back(current);
      current = 0;
      EXPECT_EQ(chunker.chunk_length(), 0u);
      data = data.subspan(*cut);
    }
    EXPECT_EQ(chunker.chunk_length(), current);
    pos += k;
  }
  if (current > 0) lengths.push_back(current);
  return lengths;
}

void ExpectValidLengths(const std::vector<size_t>& lengths, size_t total) {
  size_t sum = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    EXPECT_GT(lengths[i], 0u);
    EXPECT_LE(lengths[i], kMaxSize);
    if (i + 1 < lengths.size()) {
      EXPECT_GE(lengths[i], kMinSize);
    }
    sum += lengths[i];
  }
  EXPECT_EQ(sum, total);
}

// Fingerprint straight from docs/format.md §11: sum of w_i·x^(8·(63-i)) mod P.
uint64_t DefinitionFingerprint(ByteView window64) {
  uint64_t f = 0;
  for (size_t i = 0; i < 64; ++i) {
    uint64_t weight = 1;  // x^(8·(63-i)) mod P
    for (size_t k = 0; k < 8 * (63 - i); ++k) weight = MulMod(weight, 2, kTestPolynomial);
    f ^= MulMod(window64[i], weight, kTestPolynomial);
  }
  return f;
}

TEST(ChunkerTest, TablesRejectBadDegrees) {
  EXPECT_THROW(Tables(0), Error);
  EXPECT_THROW(Tables(0x7f), Error);                   // degree 6
  EXPECT_THROW(Tables(uint64_t{1} << 54 | 1), Error);  // degree 54
  EXPECT_NO_THROW(Tables(0x11b));                      // degree 8
  EXPECT_EQ(TestTables().polynomial(), kTestPolynomial);
}

TEST(ChunkerTest, SlidingDigestMatchesDefinition) {
  const Tables& t = TestTables();
  const Bytes data = RandomBytes(4096, 7);
  uint64_t d = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    d = t.Slide(d, i >= 64 ? data[i - 64] : 0, data[i]);
    const size_t lo = i + 1 >= 64 ? i + 1 - 64 : 0;
    ASSERT_EQ(d, t.Fingerprint(ByteView(data).subspan(lo, i + 1 - lo))) << i;
    if (i % 997 == 100) {
      EXPECT_EQ(d, DefinitionFingerprint(ByteView(data).subspan(i + 1 - 64, 64)));
    }
  }
  EXPECT_LT(d, uint64_t{1} << 53);
  const Bytes zeros(64, 0);
  EXPECT_EQ(t.Fingerprint(zeros), 0u);
}

TEST(ChunkerTest, VectorA) {
  const Bytes a = InputA();
  ASSERT_EQ(a.size(), 2240000u);
  ASSERT_EQ(Sha256(a).Hex(), "e2704b5d2a4dc4c9342c92077028ec59de5549479a779c8e7b11d3aa29d5d712");
  const std::vector<ExpectedChunk> expected = {
      {0, 1015968, "f3d509f80ced030c820556a720ed8a395ba468bf124218fde1df63139d2df0ae"},
      {1015968, 1087132, "a5e07d7324e2fdcc706d70f39cf41e7045abddb793548406951eae3fbb7260f4"},
      {2103100, 136900, "41780644865742c6033addf5b5b6db60fae7aab7e573f72e43413070726aa18e"},
  };
  ExpectChunks(a, ChunkLengths(TestTables(), a), expected);
  ExpectChunks(a, ChunkLengthsParallel(TestTables(), a, 3), expected);
}

TEST(ChunkerTest, VectorB) {
  const Bytes b = InputB();
  ASSERT_EQ(b.size(), 20971520u);
  ASSERT_EQ(Sha256(b).Hex(), "70a168c8a50b8193de8232efb126e14805cf2bbbbec4b90211ba05c2d632e56d");
  const std::vector<ExpectedChunk> expected = {
      {0, 5151694, "87f5c4b20ca9d3362474dddf353b0d247e33ded96a7822e2703b9b71cd5287fb"},
      {5151694, 934976, "7f5a7ced11a1d9b81c64ca9b2669dd813f74610edf30ea73f2c05c542461a117"},
      {6086670, 3295887, "4ca5d4c8c0e59ad548266d138b2720a9e696ec1d57037f82bbfd5b34478c9a41"},
      {9382557, 1325498, "95a4888a1e59d16b501f5f6c7d6b651406b3e170323889c1a09ba49118a681f5"},
      {10708055, 2731550, "5dc892c21a57120f8bf78631057dce561fe5722a45fdec84765f35f32a2bca66"},
      {13439605, 1681487, "156ac89cad302fe2a8521f72b1ad11065d1f4bafc9ce854ba6686541059adaa1"},
      {15121092, 661854, "bf5fe318e6c8bfb97cb3812ae3c9e394e628cf55a752c2a494a541d9fa7c4761"},
      {15782946, 4823222, "5235ae217530bc4076c17ade493a672a263e5d35a08cbe1fafffc0301ceaeb94"},
      {20606168, 365352, "6d7f458f28b0e8f73bef87fa7710733bc873ed346c7f4c3ca82ce5d6fae08b9f"},
  };
  ExpectChunks(b, ChunkLengths(TestTables(), b), expected);
  for (int threads : {2, 4, 7})
    ExpectChunks(b, ChunkLengthsParallel(TestTables(), b, threads), expected);
  // Streaming in odd pieces gives the same cuts.
  std::mt19937_64 rng(11);
  EXPECT_EQ(StreamLengths(TestTables(), b, [&] { return 1 + rng() % (3 << 20); }),
            ChunkLengths(TestTables(), b));
}

TEST(ChunkerTest, ZeroChunks) {
  const Bytes zeros(4 * 512 * 1024, 0);
  const char* sha = "07854d2fef297a06ba81685e660c332de36d5d18d546927d30daad6d7fda1541";
  const std::vector<ExpectedChunk> expected = {
      {0, 524288, sha}, {524288, 524288, sha}, {1048576, 524288, sha}, {1572864, 524288, sha}};
  ExpectChunks(zeros, ChunkLengths(TestTables(), zeros), expected);
  ExpectChunks(zeros, ChunkLengthsParallel(TestTables(), zeros, 4), expected);
  const Bytes zeros600k(600000, 0);
  const std::vector<size_t> want = {524288, 75712};
  EXPECT_EQ(ChunkLengths(TestTables(), zeros600k), want);
  EXPECT_EQ(ChunkLengthsParallel(TestTables(), zeros600k, 2), want);
  // Any polynomial: the zero window always fingerprints to 0.
  const Tables other(0x343fe6ff031a63);
  EXPECT_EQ(ChunkLengths(other, zeros600k), want);
}

TEST(ChunkerTest, EmptyAndShortInputs) {
  const Tables& t = TestTables();
  EXPECT_TRUE(ChunkLengths(t, ByteView()).empty());
  EXPECT_TRUE(ChunkLengthsParallel(t, ByteView(), 4).empty());
  const Bytes data = RandomBytes(kMinSize + 1000, 5);
  for (size_t n :
       {size_t{1}, size_t{63}, size_t{64}, kMinSize - 65, kMinSize - 64, kMinSize - 1, kMinSize}) {
    const std::vector<size_t> want = {n};
    EXPECT_EQ(ChunkLengths(t, ByteView(data).first(n)), want) << n;
    EXPECT_EQ(ChunkLengthsParallel(t, ByteView(data).first(n), 3), want) << n;
  }
  Chunker c(t);
  EXPECT_EQ(c.Next(ByteView()), std::nullopt);
  EXPECT_EQ(c.chunk_length(), 0u);
  EXPECT_EQ(c.Next(ByteView(data).first(100)), std::nullopt);
  EXPECT_EQ(c.chunk_length(), 100u);
  c.Reset();
  EXPECT_EQ(c.chunk_length(), 0u);
}

// A byte pattern whose every window misses the mask, so only kMaxSize cuts it.
Bytes NoCutData(size_t n) {
  const Tables& t = TestTables();
  for (uint8_t c = 1;; ++c) {
    const Bytes pattern = {c, uint8_t(c * 7 + 1), uint8_t(c ^ 0x5a)};
    Bytes data(n);
    for (size_t i = 0; i < n; ++i) data[i] = pattern[i % 3];
    bool ok = true;
    for (size_t p = 64; p < 67 && p <= n; ++p)
      ok = ok && (t.Fingerprint(ByteView(data).subspan(p - 64, 64)) & kSplitMask) != 0;
    if (ok) return data;
  }
}

TEST(ChunkerTest, MaxSizeWithoutNaturalCut) {
  const Tables& t = TestTables();
  const Bytes data = NoCutData(3 * kMaxSize + 12345);
  const std::vector<size_t> want = {kMaxSize, kMaxSize, kMaxSize, 12345};
  EXPECT_EQ(ChunkLengths(t, data), want);
  for (int threads : {2, 3, 5}) EXPECT_EQ(ChunkLengthsParallel(t, data, threads), want);
  std::mt19937_64 rng(3);
  EXPECT_EQ(StreamLengths(t, data, [&] { return 1 + rng() % 100000; }), want);
  const Bytes exact = NoCutData(2 * kMaxSize);
  EXPECT_EQ(ChunkLengths(t, exact), (std::vector<size_t>{kMaxSize, kMaxSize}));
  EXPECT_EQ(ChunkLengthsParallel(t, exact, 2), (std::vector<size_t>{kMaxSize, kMaxSize}));
}

TEST(ChunkerTest, StreamingEqualsWholeBuffer) {
  const Tables& t = TestTables();
  const Bytes data = RandomBytes(24 << 20, 42);
  const std::vector<size_t> want = ChunkLengths(t, data);
  ExpectValidLengths(want, data.size());
  EXPECT_GE(want.size(), 10u);
  for (size_t piece : {size_t{7}, size_t{63}, size_t{64}, size_t{65}, size_t{4096},
                       size_t{64 << 10}, size_t{(1 << 20) + 3}, kMaxSize + 1}) {
    EXPECT_EQ(StreamLengths(t, data, [&] { return piece; }), want) << piece;
  }
  std::mt19937_64 rng(9);
  EXPECT_EQ(StreamLengths(t, data, [&] { return 1 + rng() % 200; }), want);
  EXPECT_EQ(StreamLengths(t, data, [&] { return size_t{1} << (rng() % 22); }), want);
  // One byte at a time (on a prefix, to keep the test quick).
  const ByteView prefix = ByteView(data).first(6 << 20);
  EXPECT_EQ(StreamLengths(t, prefix, [] { return size_t{1}; }), ChunkLengths(t, prefix));
}

// Random data with zero runs (each a run of candidates) and constant runs of several lengths.
Bytes MixedData(size_t n, uint64_t seed) {
  Bytes data = RandomBytes(n, seed);
  std::mt19937_64 rng(seed + 1);
  const size_t runs = n / 20000 + 1;
  for (size_t r = 0; r < runs; ++r) {
    const size_t len = std::min<size_t>(n, 1 + rng() % (r % 8 == 0 ? 200000 : 300));
    const size_t at = rng() % (n - len + 1);
    std::memset(data.data() + at, r % 5 == 0 ? 0xab : 0, len);
  }
  return data;
}

std::vector<size_t> Expand(const std::vector<CandidateRun>& runs) {
  std::vector<size_t> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_LE(runs[i].first, runs[i].last);
    if (i > 0) {
      EXPECT_GT(runs[i].first, runs[i - 1].last + 1);  // sorted, maximal
    }
    for (size_t p = runs[i].first; p <= runs[i].last; ++p) out.push_back(p);
  }
  return out;
}

// Candidate end positions by sliding one window over everything (no lanes, no zero-run shortcut).
std::vector<size_t> NaiveCandidates(const Tables& t, ByteView data) {
  std::vector<size_t> out;
  uint64_t d = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    d = t.Slide(d, i >= 64 ? data[i - 64] : 0, data[i]);
    if (i + 1 >= 64 && (d & kSplitMask) == 0) out.push_back(i + 1);
  }
  return out;
}

void ExpectCandidates(const Tables& t, ByteView data, const std::vector<size_t>& froms) {
  const std::vector<size_t> want = NaiveCandidates(t, data);
  for (size_t from : froms) {
    std::vector<size_t> expected;
    for (size_t p : want)
      if (p >= from) expected.push_back(p);
    for (int threads = 0; threads <= 9; ++threads) {
      EXPECT_EQ(Expand(CutCandidates(t, data, from, threads)), expected)
          << "from " << from << " threads " << threads;
    }
  }
}

TEST(ChunkerTest, CutCandidatesMatchDefinition) {
  const Tables& t = TestTables();
  const Bytes data = MixedData(400000, 17);
  ASSERT_GT(NaiveCandidates(t, data).size(), 1000u);
  ExpectCandidates(t, data, {0, 64, 65, 1000, 123457});
  EXPECT_TRUE(CutCandidates(t, data, data.size() + 1, 4).empty());
  // Zero runs around the length at which they are recognised without hashing, one across
  // several scan pieces, and one at the very start.
  Bytes runs = RandomBytes(2 << 20, 18);
  size_t at = 0;
  for (size_t len : {5000, 63, 64, 65, 4095, 4096, 4097, 8191, 700000, 1, 4160, 4159}) {
    std::memset(runs.data() + at, 0, len);
    at += len + 1000 + at % 77;
  }
  std::memset(runs.data() + runs.size() - 6000, 0, 6000);  // and one at the very end
  ExpectCandidates(t, runs, {0, 64, 5000, 5064, 5065});
  // All zeros: one run, whatever the segments.
  const Bytes zeros(100000, 0);
  const std::vector<CandidateRun> all_zero = {{64, 100000}};
  for (int threads = 1; threads <= 6; ++threads)
    EXPECT_EQ(CutCandidates(t, zeros, 0, threads), all_zero) << threads;
}

TEST(ChunkerTest, ParallelEqualsSerialOnRandomData) {
  const Tables& t = TestTables();
  const Bytes data = RandomBytes(40 << 20, 99);
  for (size_t n : {size_t{0}, size_t{1}, size_t{100}, kMinSize - 1, kMinSize, kMinSize + 1,
                   kMinSize + 64, 3 * kMinSize, kMaxSize, kMaxSize + 1, 2 * kMaxSize,
                   size_t{(16 << 20) + 12345}, data.size()}) {
    const ByteView in = ByteView(data).first(n);
    const std::vector<size_t> want = ChunkLengths(t, in);
    ExpectValidLengths(want, n);
    for (int threads : {1, 2, 3, 4, 7, 16})
      EXPECT_EQ(ChunkLengthsParallel(t, in, threads), want) << n << " " << threads;
  }
}

TEST(ChunkerTest, ParallelEqualsSerialOnZeroRuns) {
  const Tables& t = TestTables();
  for (uint64_t seed : {1, 2, 3}) {
    const Bytes data = MixedData((12 << 20) + 777 * seed, seed);
    const std::vector<size_t> want = ChunkLengths(t, data);
    ExpectValidLengths(want, data.size());
    for (int threads : {2, 3, 5, 8})
      EXPECT_EQ(ChunkLengthsParallel(t, data, threads), want) << seed << " " << threads;
    std::mt19937_64 rng(seed);
    EXPECT_EQ(StreamLengths(t, data, [&] { return 1 + rng() % 70000; }), want);
  }
  // Zeros with random islands: cuts land right after islands.
  Bytes sparse((20 << 20) + 5, 0);
  std::mt19937_64 rng(8);
  for (int i = 0; i < 300; ++i) {
    const size_t at = rng() % (sparse.size() - 1000);
    for (size_t k = 0; k < 1 + rng() % 1000; ++k) sparse[at + k] = static_cast<uint8_t>(rng());
  }
  const std::vector<size_t> want = ChunkLengths(t, sparse);
  ExpectValidLengths(want, sparse.size());
  for (int threads : {2, 3, 4, 9}) EXPECT_EQ(ChunkLengthsParallel(t, sparse, threads), want);
}

// Micro-benchmark: prints MB/s on 64 MiB of random data (best of 3).
TEST(ChunkerTest, Throughput) {
  const Tables& t = TestTables();
  const Bytes data = RandomBytes(64 << 20, 1234);
  const int threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  auto measure = [&](const std::function<size_t()>& run) {
    double best = 1e30;
    size_t chunks = 0;
    for (int i = 0; i < 3; ++i) {
      const auto start = std::chrono::steady_clock::now();
      chunks = run();
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      best = std::min(best, took.count());
    }
    return std::make_pair(data.size() / best / 1e6, chunks);
  };
  const auto serial = measure([&] { return ChunkLengths(t, data).size(); });
  const auto parallel = measure([&] { return ChunkLengthsParallel(t, data, threads).size(); });
  const auto scan = measure([&] { return CutCandidates(t, data, 0, 1).size(); });
  std::printf(
      "[chunker bench] 64 MiB random: serial %.0f MB/s (%zu chunks), parallel x%d %.0f MB/s,"
      " full-scan 1 thread %.0f MB/s\n",
      serial.first, serial.second, threads, parallel.first, scan.first);
  EXPECT_EQ(serial.second, parallel.second);
}

}  // namespace
}  // namespace haven::chunker
