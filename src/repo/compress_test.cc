// "auto"'s per-file level trial (docs/format.md §12): level 1 only where it is measured to
// cost at most 1 % over level 3 on the sample.
#include "repo/compress.h"

#include <gtest/gtest.h>

#include <random>

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

TEST(ChooseAutoLevel, LogLinesGetLevelOneAndCostNoMoreThanOnePercent) {
  const Bytes log = testing::LogLines(1 << 20, 7);
  ASSERT_EQ(ChooseAutoLevel(log), 1);
  EXPECT_LE(ZstdCompress(log, 1).size() * 100, ZstdCompress(log, 3).size() * 101);
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
