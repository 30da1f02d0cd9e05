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
