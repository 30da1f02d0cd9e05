#include "core/huge_buffer.h"
#include "core/huge_buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>

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

// The pool hands kept buffers out again, keeps no more than max_kept, gives a shared buffer
// back when its last user drops it, and returns the pages past `resident` to the OS.
TEST(HugeBufferPool, RecyclesWithinItsLimits) {
  HugeBufferPool pool({.bytes = 3 * HugeBuffer::kHugePage, .max_kept = 2, .resident = HugeBuffer::kHugePage});
  std::unique_ptr<HugeBuffer> a = pool.Take(), b = pool.Take(), c = pool.Take();
  ASSERT_EQ(a->size(), 3 * HugeBuffer::kHugePage);
  ASSERT_TRUE(a->mapped());
  uint8_t* const a_data = a->data();
  std::memset(a->data(), 0x77, a->size());
  pool.Put(std::move(a));
  pool.Put(std::move(b));
  pool.Put(std::move(c));  // beyond max_kept: freed
  EXPECT_EQ(pool.kept(), 2u);
  std::unique_ptr<HugeBuffer> again = pool.Take(), first = pool.Take();
  EXPECT_EQ(pool.kept(), 0u);
  ASSERT_EQ(first->data(), a_data);  // the same mapping, handed out again
  EXPECT_EQ(first->data()[0], 0x77);  // resident bytes kept
  EXPECT_EQ(first->data()[first->size() - 1], 0);  // past `resident`: given back, zero again
  {
    std::shared_ptr<HugeBuffer> s1 = pool.Share(std::move(first), HugeBuffer::kHugePage);
    std::shared_ptr<HugeBuffer> s2 = s1;
    s1.reset();
    EXPECT_EQ(pool.kept(), 0u);
  }
  EXPECT_EQ(pool.kept(), 1u);
  HugeBufferPool growing;  // bytes 0: empty buffers, grown by their users
  EXPECT_EQ(growing.Take()->size(), 0u);
}

}  // namespace
}  // namespace haven
