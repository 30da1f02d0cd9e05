// Golden tests of the scanner's text encodings (capture/text_encoding.h): which heads are
// read as UTF-16 or with a UTF-8 mark left out, and the UTF-16 decoding's edge cases.
#include "capture/text_encoding.h"

#include <gtest/gtest.h>

#include <string>

namespace haven::capture {
namespace {

std::string Utf16Le(const std::string& ascii) {
  std::string out;
  for (char c : ascii) out += std::string(1, c) + '\0';
  return out;
}

std::string Utf16Be(const std::string& ascii) {
  std::string out;
  for (char c : ascii) out += std::string(1, '\0') + c;
  return out;
}

TextEncoding Detect(const std::string& head, size_t expect_skip) {
  size_t skip = 99;
  const TextEncoding e = DetectTextEncoding(head, &skip);
  EXPECT_EQ(skip, expect_skip) << "head of " << head.size() << " bytes";
  return e;
}

std::string Decode(const std::string& raw, bool big, bool at_end, size_t* used = nullptr) {
  std::string out;
  const size_t n = AppendUtf16AsUtf8(raw, big, at_end, out);
  if (used) *used = n;
  return out;
}

TEST(TextEncoding, ByteOrderMarks) {
  EXPECT_EQ(Detect("\xef\xbb\xbfpassword = x\n", 3), TextEncoding::kUtf8Bom);
  EXPECT_EQ(Detect("\xff\xfe" + Utf16Le("a=b\r\n"), 2), TextEncoding::kUtf16Le);
  EXPECT_EQ(Detect("\xfe\xff" + Utf16Be("a=b\r\n"), 2), TextEncoding::kUtf16Be);
  // UTF-32's little-endian mark is not UTF-16's: left to the binary test.
  EXPECT_EQ(Detect(std::string("\xff\xfe\0\0a\0\0\0", 8), 0), TextEncoding::kUtf8);
}

TEST(TextEncoding, Utf16OfAsciiWithoutAMark) {
  const std::string text = "Windows Registry Editor Version 5.00\r\n\r\n[HKEY_CURRENT_USER]\r\n";
  EXPECT_EQ(Detect(Utf16Le(text), 0), TextEncoding::kUtf16Le);
  EXPECT_EQ(Detect(Utf16Be(text), 0), TextEncoding::kUtf16Be);
  // Too short to tell (under 16 code units), and ordinary text, stay UTF-8.
  EXPECT_EQ(Detect(Utf16Le("short"), 0), TextEncoding::kUtf8);
  EXPECT_EQ(Detect(text, 0), TextEncoding::kUtf8);
  EXPECT_EQ(Detect("", 0), TextEncoding::kUtf8);
}

TEST(TextEncoding, BinaryIsNotUtf16) {
  // Runs of NUL (NUL NUL code units), an ELF header, control bytes beside NULs.
  EXPECT_EQ(Detect(std::string(64, '\0'), 0), TextEncoding::kUtf8);
  EXPECT_EQ(Detect(std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(120, '\0'), 0),
            TextEncoding::kUtf8);
  std::string controls;
  for (int i = 0; i < 40; ++i) controls += std::string(1, static_cast<char>(i % 8 + 1)) + '\0';
  EXPECT_EQ(Detect(controls, 0), TextEncoding::kUtf8);
  // More than 1 in 50 code units with a non-NUL high byte: not UTF-16 of ASCII.
  std::string mixed = Utf16Le(std::string(40, 'a'));
  for (int i = 0; i < 4; ++i) mixed += "\x41\x42";
  EXPECT_EQ(Detect(mixed, 0), TextEncoding::kUtf8);
}

TEST(TextEncoding, DecodesEveryPlaneToUtf8) {
  // A, e-acute, the euro sign, G clef (a surrogate pair), in both byte orders.
  const std::string le("A\0\xe9\0\xac\x20\x34\xd8\x1e\xdd", 10);
  const std::string be("\0A\0\xe9\x20\xac\xd8\x34\xdd\x1e", 10);
  const std::string utf8 = "A\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e";
  EXPECT_EQ(Decode(le, false, true), utf8);
  EXPECT_EQ(Decode(be, true, true), utf8);
}

TEST(TextEncoding, CutUnitsWaitUnlessAtTheEnd) {
  size_t used = 0;
  // A high surrogate whose low one is not there yet: left for the next call.
  EXPECT_EQ(Decode(std::string("A\0\x34\xd8", 4), false, false, &used), "A");
  EXPECT_EQ(used, 2u);
  // An odd byte: the same.
  EXPECT_EQ(Decode(std::string("A\0B", 3), false, false, &used), "A");
  EXPECT_EQ(used, 2u);
  // At the end both become U+FFFD and every byte is used.
  EXPECT_EQ(Decode(std::string("A\0\x34\xd8", 4), false, true, &used), "A\xef\xbf\xbd");
  EXPECT_EQ(used, 4u);
  EXPECT_EQ(Decode(std::string("A\0B", 3), false, true, &used), "A\xef\xbf\xbd");
  EXPECT_EQ(used, 3u);
}

TEST(TextEncoding, UnpairedSurrogatesBecomeReplacements) {
  // A low surrogate alone, a high one before an ordinary unit.
  EXPECT_EQ(Decode(std::string("\x1e\xdd" "A\0", 4), false, true), "\xef\xbf\xbd" "A");
  EXPECT_EQ(Decode(std::string("\x34\xd8" "A\0", 4), false, true), "\xef\xbf\xbd" "A");
}

TEST(TextEncoding, WhichHeadsHoldEscapes) {
  EXPECT_TRUE(HasUnicodeEscapes("{\"a\": \"\\u0022x\"}"));
  EXPECT_TRUE(HasUnicodeEscapes("https:\\/\\/h.test"));
  EXPECT_TRUE(HasUnicodeEscapes("name=J\\u00fcrgen"));
  // \u000a is a control character's escape: nothing to read; nor are \n or a stray \u.
  EXPECT_FALSE(HasUnicodeEscapes("line\\u000aline"));
  EXPECT_FALSE(HasUnicodeEscapes("a\\nb \\usr \\u12"));
  EXPECT_FALSE(HasUnicodeEscapes(""));
}

TEST(TextEncoding, ReadsEscapesAsTheirCharacters) {
  auto unescape = [](const std::string& raw) {
    std::string out;
    EXPECT_EQ(AppendUnescaped(raw, true, out), raw.size());
    return out;
  };
  EXPECT_EQ(unescape("{\\u0022k\\u0022:\\u0022v\\u0022}"), "{\"k\":\"v\"}");
  EXPECT_EQ(unescape("https:\\/\\/h.test\\/x"), "https://h.test/x");
  EXPECT_EQ(unescape("06pcv\\u00fceI5QN\\u20ac310"), "06pcv\xc3\xbc" "eI5QN\xe2\x82\xac" "310");
  EXPECT_EQ(unescape("\\ud834\\udd1e"), "\xf0\x9d\x84\x9e");  // a surrogate pair
  // As written: a control character's escape, a lone surrogate, an escaped backslash, \n.
  EXPECT_EQ(unescape("a\\u000ab"), "a\\u000ab");
  EXPECT_EQ(unescape("\\ud834x"), "\\ud834x");
  EXPECT_EQ(unescape("\\\\u0022"), "\\\\u0022");
  EXPECT_EQ(unescape("a\\nb\\"), "a\\nb\\");
}

TEST(TextEncoding, CutEscapesWaitUnlessAtTheEnd) {
  std::string out;
  const std::string raw = "abc\\u00";
  EXPECT_EQ(AppendUnescaped(raw, false, out), 3u);
  EXPECT_EQ(out, "abc");
  out.clear();
  EXPECT_EQ(AppendUnescaped(raw, true, out), raw.size());
  EXPECT_EQ(out, raw);
}

}  // namespace
}  // namespace haven::capture
