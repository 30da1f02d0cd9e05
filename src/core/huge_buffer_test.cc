#include "core/huge_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace haven {
namespace {

TEST(HugeBuffer, GrowsOnlyAndIsWritable) {
  HugeBuffer b;
  EXPECT_EQ(b.size(), 0u);
  EXPECT_TRUE(b.First(0).empty());
  auto s = b.First(1000);
  ASSERT_EQ(s.size(), 1000u);
  EXPECT_FALSE(b.mapped());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
  std::memset(s.data(), 0xAB, s.size());
  uint8_t* before = b.data();
  EXPECT_EQ(b.First(10).data(), before);  // smaller: no reallocation, contents kept
  EXPECT_EQ(b.data()[999], 0xAB);
  EXPECT_EQ(b.size(), 1000u);

  auto big = b.First(HugeBuffer::kHugePage + 1);
  EXPECT_TRUE(b.mapped());
  EXPECT_EQ(b.size(), 2 * HugeBuffer::kHugePage);  // rounded up to whole huge pages
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % HugeBuffer::kHugePage, 0u);
  std::memset(big.data(), 0x5A, b.size());
  EXPECT_EQ(b.data()[b.size() - 1], 0x5A);
  EXPECT_EQ(b.First(HugeBuffer::kHugePage * 2).data(), big.data());
}

TEST(HugeBuffer, FreshMappingsReadAsZero) {
  HugeBuffer b(3 * HugeBuffer::kHugePage);
  ASSERT_TRUE(b.mapped());
  size_t nonzero = 0;
  for (size_t i = 0; i < b.size(); i += 4096) nonzero += b.data()[i] != 0;
  EXPECT_EQ(nonzero, 0u);
}

}  // namespace
}  // namespace haven
