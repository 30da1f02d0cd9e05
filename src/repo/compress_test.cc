// "auto"'s per-file level trial (docs/format.md §12): level 1 only where it is measured to
// cost at most 1 % over level 3 on the sample.
#include "repo/compress.h"

#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "repo/test_log_lines.h"

namespace haven {
namespace {

// Bytes from a skewed distribution with repeats far apart: level 3's second hash table
// finds what level 1 misses.
Bytes FarRepeats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes block(48 * 1024);
  for (auto& b : block) b = static_cast<uint8_t>(rng() % 64);
  Bytes out;
  while (out.size() < n) {
    size_t from = rng() % (block.size() - 64);
    size_t len = 8 + rng() % 24;
    out.insert(out.end(), block.begin() + static_cast<long>(from),
               block.begin() + static_cast<long>(from + len));
    out.push_back(static_cast<uint8_t>(rng()));
  }
  out.resize(n);
  return out;
}

// The rule, computed independently of ChooseAutoLevel.
int Expected(ByteView sample) {
  size_t fast = ZstdCompress(sample, 1).size(), normal = ZstdCompress(sample, 3).size();
  return fast * 100 <= normal * 101 ? 1 : 3;
}

TEST(ChooseAutoLevel, FollowsTheMeasuredRule) {
  int ones = 0, threes = 0;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    for (const Bytes& sample : {testing::LogLines(1 << 20, seed), FarRepeats(1 << 20, seed)}) {
      const int got = ChooseAutoLevel(sample);
      EXPECT_EQ(got, Expected(sample)) << "seed " << seed;
      (got == 1 ? ones : threes)++;
    }
  }
  // Both outcomes occur: the trial is not a constant.
  EXPECT_EQ(ones, 3);
  EXPECT_EQ(threes, 3);
}

TEST(DataZstdLevel, AutoTakesLevelOneBelowTheSmallBlobSizeOtherModesTheirOwn) {
  EXPECT_EQ(DataZstdLevel(Compression::kAuto, 1), 1);
  EXPECT_EQ(DataZstdLevel(Compression::kAuto, kSmallBlobMax - 1), 1);
  EXPECT_EQ(DataZstdLevel(Compression::kAuto, kSmallBlobMax), 3);
  EXPECT_EQ(DataZstdLevel(Compression::kAuto, size_t{8} << 20), 3);
  for (size_t n : {size_t{100}, kSmallBlobMax, size_t{1} << 20}) {
    EXPECT_EQ(DataZstdLevel(Compression::kFastest, n), 1);
    EXPECT_EQ(DataZstdLevel(Compression::kBetter, n), 7);
    EXPECT_EQ(DataZstdLevel(Compression::kMax, n), 11);
    EXPECT_EQ(DataZstdLevel(Compression::kOff, n), 0);
  }
}

TEST(ChooseAutoLevel, LogLinesGetLevelOneAndCostNoMoreThanOnePercent) {
  const Bytes log = testing::LogLines(1 << 20, 7);
  ASSERT_EQ(ChooseAutoLevel(log), 1);
  EXPECT_LE(ZstdCompress(log, 1).size() * 100, ZstdCompress(log, 3).size() * 101);
}

// The entropy gate that keeps new data out of zstd: random bytes (what compressed files
// hold) are incompressible at every size from one sample up, whether the blob is sampled
// whole (under 12 KiB) or in three spread pieces; text, a run of one byte, random bytes
// with one sample of text, and anything under 4 KiB are not.
TEST(LooksIncompressible, RandomAtEverySizeTextAndRunsNot) {
  std::mt19937 rng(11);
  for (size_t n : {size_t{4096}, size_t{5000}, size_t{12287}, size_t{12288}, size_t{1} << 20}) {
    Bytes random(n);
    for (auto& b : random) b = static_cast<uint8_t>(rng());
    EXPECT_TRUE(LooksIncompressible(random)) << n;
    EXPECT_FALSE(LooksIncompressible(testing::LogLines(n, 3))) << n;
    EXPECT_FALSE(LooksIncompressible(Bytes(n, 0x41))) << n;
    EXPECT_FALSE(LooksIncompressible(ByteView(random.data(), 4095))) << n;
    if (n >= 3 * 4096) {  // the middle sample is text
      Bytes mixed = random;
      Bytes text = testing::LogLines(4096, 5);
      std::copy(text.begin(), text.end(), mixed.begin() + static_cast<long>((n - 4096) / 2));
      EXPECT_FALSE(LooksIncompressible(mixed)) << n;
    }
  }
}

TEST(ChooseAutoLevel, ShortOrIncompressibleSamplesAreNotTried) {
  EXPECT_EQ(ChooseAutoLevel(testing::LogLines(kLevelTrialMin - 1, 1)), 3);
  std::mt19937 rng(5);
  Bytes random(1 << 20);
  for (auto& b : random) b = static_cast<uint8_t>(rng());
  EXPECT_EQ(ChooseAutoLevel(random), 3);
  EXPECT_EQ(ChooseAutoLevel({}), 3);
}

}  // namespace
}  // namespace haven

namespace haven {
namespace {

Bytes Text(size_t n, int seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>('a' + (i / 7 + seed) % 26);
  return b;
}

// A frame that does not declare its size (as a streaming encoder writes it).
Bytes UnsizedFrame(ByteView data) {
  Bytes out;
  ZstdStreamWriter w(3, out);
  w.Write(data);
  w.End();
  return out;
}

// With an expected size (a blob's, from the index): one or more frames, declaring their
// sizes or not, decode whole; a declared size that disagrees fails before any buffer of
// the expected size is made (a hostile index may say 4 GiB), as does a wrong total.
TEST(ZstdDecompress, AnExpectedSizeAcceptsEveryFrameFormAndChecksBeforeAllocating) {
  const Bytes a = Text(100000, 1), b = Text(50000, 2);
  Bytes both = a;
  both.insert(both.end(), b.begin(), b.end());
  const Bytes sized_a = ZstdCompress(a, 3), sized_b = ZstdCompress(b, 3);
  Bytes two_sized = sized_a;
  two_sized.insert(two_sized.end(), sized_b.begin(), sized_b.end());
  const Bytes unsized_a = UnsizedFrame(a), unsized_b = UnsizedFrame(b);
  Bytes two_unsized = unsized_a;
  two_unsized.insert(two_unsized.end(), unsized_b.begin(), unsized_b.end());
  Bytes mixed = sized_a;
  mixed.insert(mixed.end(), unsized_b.begin(), unsized_b.end());

  EXPECT_EQ(ZstdDecompress(sized_a, a.size(), a.size(), "t"), a);
  EXPECT_EQ(ZstdDecompress(unsized_a, a.size(), a.size(), "t"), a);
  using Frames = std::initializer_list<const Bytes*>;
  for (const Bytes* f : Frames{&two_sized, &two_unsized, &mixed})
    EXPECT_EQ(ZstdDecompress(*f, both.size(), both.size(), "t"), both);

  for (const Bytes* f : Frames{&sized_a, &unsized_a, &two_sized, &two_unsized}) {
    EXPECT_THROW(ZstdDecompress(*f, 0xffffffffu, 0xffffffffu, "t"), Error);
    EXPECT_THROW(ZstdDecompress(*f, 7, 7, "t"), Error);
  }
  EXPECT_THROW(ZstdDecompress(Bytes{1, 2, 3, 4, 5, 6, 7, 8}, 10, 10, "t"), Error);
  Bytes trailing = sized_a;
  trailing.push_back(0);
  EXPECT_THROW(ZstdDecompress(trailing, a.size(), a.size(), "t"), Error);
}

// The thread's context keeps the workspace zstd gives back (KeptBlock in compress.cc):
// inputs whose sizes swing between tiny and large, at every level, make zstd grow its
// workspace and, after a run of tiny ones, shrink it again; every frame still round-trips
// (and ASan/TSan builds see the blocks handed between zstd and the cache).
TEST(ZstdCompress, ContextMemoryReusedAcrossSizeSwingsRoundTrips) {
  const size_t sizes[] = {64, 1000, 16 << 10, 300, 1 << 20, 100};
  const Bytes source = FarRepeats((1 << 20) + 4096, 5);
  for (int level : {1, 3, 7, 11, 3}) {
    for (int round = 0; round < 3; ++round) {
      for (size_t n : sizes) {
        // Runs of tiny inputs long enough for zstd's "workspace too large" rule (128 calls).
        const int repeats = n < 2000 ? 150 : 1;
        for (int r = 0; r < repeats; ++r) {
          const size_t at = static_cast<size_t>(r * 17 + level) % 4096;
          Bytes in(source.begin() + static_cast<long>(at), source.begin() + static_cast<long>(at + n));
          Bytes frame = ZstdCompress(in, level);
          ASSERT_EQ(ZstdDecompress(frame, in.size(), in.size(), "test"), in)
              << "level " << level << ", " << n << " bytes";
        }
      }
    }
  }
}

}  // namespace
}  // namespace haven
