#include "core/bytes.h"

#include <gtest/gtest.h>

#include "core/id.h"

namespace haven {
namespace {

TEST(Hex, DecodeIntoAcceptsBothCasesAndRejectsEveryNonDigit) {
  uint8_t out[2];
  ASSERT_TRUE(HexDecodeInto("0aFf", out, 2));
  EXPECT_EQ(out[0], 0x0a);
  EXPECT_EQ(out[1], 0xff);
  for (int c = 0; c < 256; ++c) {
    bool digit = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    std::string s = "0" + std::string(1, static_cast<char>(c)) + "00";
    EXPECT_EQ(HexDecodeInto(s, out, 2), digit) << c;
    std::string t = std::string(1, static_cast<char>(c)) + "000";
    EXPECT_EQ(HexDecodeInto(t, out, 2), digit) << c;
  }
  EXPECT_FALSE(HexDecodeInto("000", out, 2));    // wrong length
  EXPECT_FALSE(HexDecodeInto("000000", out, 2));
  EXPECT_FALSE(HexDecode("abc").has_value());
}

TEST(Hex, DecodeIntoLongRunsMatchTheByteByByteDecoding) {
  // 32-digit blocks take a vectorized path: every byte value at every position of a
  // 64-digit id (and of the scalar tail of a 40-digit string) must decide as one digit does.
  const std::string base = "0123456789abcdefABCDEF0011223344556677889900aabbccddeeff0a1b2c3d";
  uint8_t out[32], one;
  ASSERT_TRUE(HexDecodeInto(base, out, 32));
  for (size_t i = 0; i < 32; ++i) {
    ASSERT_TRUE(HexDecodeInto(base.substr(2 * i, 2), &one, 1));
    EXPECT_EQ(out[i], one) << i;
  }
  for (size_t pos : {0, 1, 15, 16, 17, 31, 32, 47, 48, 63}) {
    for (int c = 0; c < 256; ++c) {
      std::string s = base;
      s[pos] = static_cast<char>(c);
      char pair[2] = {s[pos & ~size_t{1}], s[pos | 1]};
      bool digit = HexDecodeInto(std::string_view(pair, 2), &one, 1);
      ASSERT_EQ(HexDecodeInto(s, out, 32), digit) << pos << " " << c;
      if (digit) {
        EXPECT_EQ(out[pos / 2], one);
      }
    }
  }
  std::string tail = base.substr(0, 40);
  tail[36] = 'g';
  EXPECT_FALSE(HexDecodeInto(tail, out, 20));
}

TEST(Hex, IdRoundTrip) {
  std::string hex(64, '0');
  for (size_t i = 0; i < 64; ++i) hex[i] = "0123456789abcdef"[(i * 7) % 16];
  auto id = BlobId::FromHex(hex);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->Hex(), hex);
  hex[63] = 'g';
  EXPECT_FALSE(BlobId::FromHex(hex).has_value());
  EXPECT_FALSE(BlobId::FromHex(hex.substr(0, 62)).has_value());
}

}  // namespace
}  // namespace haven
