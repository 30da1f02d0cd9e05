#include "repo/gojson.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace haven::gojson {
namespace {

using namespace std::string_literals;

// JSON text of a node's "name" field for the raw name, built the slow way.
std::string NameJson(std::string_view raw) {
  std::string out;
  AppendString(out, QuoteName(raw));
  return out;
}

std::string Json(std::string_view s) {
  std::string out;
  AppendString(out, s);
  return out;
}

// ---- Names: the vectors observed in restic 0.14 trees (docs/format.md §10.3) ----

TEST(GoJsonName, ObservedRestic014Vectors) {
  struct Case {
    std::string raw;
    std::string json;
  };
  const std::vector<Case> cases = {
      {"bad\xffx", R"("bad\\xffx")"},
      {"bell\ax", R"("bell\\ax")"},
      {"caf\xc3\xa9", "\"caf\xc3\xa9\""},
      {"ctl\x01x", R"("ctl\\x01x")"},
      {"del\x7fx", R"("del\\x7fx")"},
      {"emoji\xf0\x9f\x98\x80", "\"emoji\xf0\x9f\x98\x80\""},
      {"ls\xe2\x80\xa8x", R"("ls\\u2028x")"},
      {"nbsp\xc2\xa0x", R"("nbsp\\u00a0x")"},
      {"shy\xc2\xadx", R"("shy\\u00adx")"},
      {"tab\tname", R"("tab\\tname")"},
      {R"(we"ird\\name <&>.txt)", R"("we\\\"ird\\\\\\\\name \u003c\u0026\u003e.txt")"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(NameJson(c.raw), c.json) << c.json;
    std::string direct;
    AppendNameString(direct, c.raw);
    EXPECT_EQ(direct, c.json) << c.json;
    EXPECT_EQ(UnquoteName(QuoteName(c.raw)), c.raw) << c.json;
  }
}

TEST(GoJsonName, QuoteEscapes) {
  EXPECT_EQ(QuoteName(""), "");
  EXPECT_EQ(QuoteName("plain-name_1.txt"), "plain-name_1.txt");
  EXPECT_EQ(QuoteName("\""), R"(\")");
  EXPECT_EQ(QuoteName("\\"), R"(\\)");
  EXPECT_EQ(QuoteName("'`<>&/"), "'`<>&/");
  EXPECT_EQ(QuoteName("\a\b\f\n\r\t\v"), R"(\a\b\f\n\r\t\v)");
  EXPECT_EQ(QuoteName("\x00"s), R"(\x00)");
  EXPECT_EQ(QuoteName("\x1b\x1f\x7f"), R"(\x1b\x1f\x7f)");
  EXPECT_EQ(QuoteName("\xc2\x80\xc2\x9f"), R"(\u0080\u009f)");  // C1 controls.
  EXPECT_EQ(QuoteName("\xe2\x80\x8b"), R"(\u200b)");            // ZWSP (Cf).
  EXPECT_EQ(QuoteName("\xe3\x80\x80"), R"(\u3000)");            // Ideographic space (Zs).
  EXPECT_EQ(QuoteName("\xe2\x80\xa9"), R"(\u2029)");            // Paragraph separator.
  EXPECT_EQ(QuoteName("\xef\xbb\xbf"), R"(\ufeff)");            // BOM (Cf).
  EXPECT_EQ(QuoteName("\xee\x80\x80"), R"(\ue000)");            // Private use (Co).
  EXPECT_EQ(QuoteName("\xcd\xb8"), R"(\u0378)");                // Unassigned.
  EXPECT_EQ(QuoteName("\xf4\x8f\xbf\xbf"), R"(\U0010ffff)");    // Noncharacter.
  EXPECT_EQ(QuoteName("\xf3\xa0\x80\x81"), R"(\U000e0001)");    // Language tag (Cf).
  // U+FFFD written as a real character is printable and stays raw.
  EXPECT_EQ(QuoteName("a\xef\xbf\xbd"), "a\xef\xbf\xbd");
  // Unicode 13.0 vs later: U+1F972 (13.0) is printable, U+1FAE0 (14.0) is not for go1.19.
  EXPECT_EQ(QuoteName("\xf0\x9f\xa5\xb2"), "\xf0\x9f\xa5\xb2");
  EXPECT_EQ(QuoteName("\xf0\x9f\xab\xa0"), R"(\U0001fae0)");
  EXPECT_EQ(QuoteName("\xe9\xbf\xbc"), "\xe9\xbf\xbc");  // U+9FFC, 13.0.
  EXPECT_EQ(QuoteName("\xe9\xbf\xbd"), R"(\u9ffd)");     // U+9FFD, 14.0.
}

TEST(GoJsonName, QuoteInvalidUtf8TakesOneByteAtATime) {
  EXPECT_EQ(QuoteName("\xff"), R"(\xff)");
  EXPECT_EQ(QuoteName("\x80\xbf"), R"(\x80\xbf)");                  // Lone continuations.
  EXPECT_EQ(QuoteName("\xc0\x80"), R"(\xc0\x80)");                  // Overlong NUL.
  EXPECT_EQ(QuoteName("\xc1\xbf"), R"(\xc1\xbf)");                  // Overlong.
  EXPECT_EQ(QuoteName("\xe0\x80\xaf"), R"(\xe0\x80\xaf)");          // Overlong 3-byte.
  EXPECT_EQ(QuoteName("\xf0\x80\x80\xaf"), R"(\xf0\x80\x80\xaf)");  // Overlong 4-byte.
  EXPECT_EQ(QuoteName("\xed\xa0\x80"), R"(\xed\xa0\x80)");          // Surrogate U+D800.
  EXPECT_EQ(QuoteName("\xed\xbf\xbf"), R"(\xed\xbf\xbf)");          // Surrogate U+DFFF.
  EXPECT_EQ(QuoteName("\xf4\x90\x80\x80"), R"(\xf4\x90\x80\x80)");  // U+110000.
  EXPECT_EQ(QuoteName("\xf5\x80\x80\x80"), R"(\xf5\x80\x80\x80)");
  EXPECT_EQ(QuoteName("\xe2\x82"), R"(\xe2\x82)");    // Truncated at end.
  EXPECT_EQ(QuoteName("\xe2\x82-"), R"(\xe2\x82-)");  // Truncated before ASCII.
  EXPECT_EQ(QuoteName("\xf0\x9f\x98"), R"(\xf0\x9f\x98)");
  // A bad byte followed by a valid sequence: only the bad byte is escaped.
  EXPECT_EQ(QuoteName("\xe2\xc3\xa9"), "\\xe2\xc3\xa9");
  // Boundaries that are valid.
  EXPECT_EQ(QuoteName("\xed\x9f\xbf"), R"(\ud7ff)");  // U+D7FF is unassigned in 13.0.
  EXPECT_EQ(QuoteName("\xee\x80\x80"), R"(\ue000)");
  EXPECT_EQ(QuoteName("\xf0\x90\x80\x80"), "\xf0\x90\x80\x80");  // U+10000 LINEAR B.
}

TEST(GoJsonName, UnquoteEscapes) {
  EXPECT_EQ(UnquoteName(""), "");
  EXPECT_EQ(UnquoteName("abc"), "abc");
  EXPECT_EQ(UnquoteName(R"(\a\b\f\n\r\t\v\\\")"), "\a\b\f\n\r\t\v\\\"");
  EXPECT_EQ(UnquoteName(R"(\x41\xff\xAB)"), "A\xff\xab");
  EXPECT_EQ(UnquoteName(R"(\101\000\377)"), "A\0\xff"s);
  EXPECT_EQ(UnquoteName(R"(\u00e9\u00DF\U0001F600)"), "\xc3\xa9\xc3\x9f\xf0\x9f\x98\x80");
  EXPECT_EQ(UnquoteName(R"(\u0041)"), "A");
  EXPECT_EQ(UnquoteName(R"(\U0010ffff)"), "\xf4\x8f\xbf\xbf");
  // Characters that need no escape (raw controls other than newline, non-printables).
  EXPECT_EQ(UnquoteName("a\x01\x7f\xc2\xa0'`"), "a\x01\x7f\xc2\xa0'`");
}

TEST(GoJsonName, UnquoteRejects) {
  for (const char* bad : {
           "\\",              // Trailing backslash.
           "a\"b",            // Raw quote.
           "a\nb",            // Raw newline.
           "a\\\nb",          // Escaped raw newline is not an escape.
           "\\'",             // Only valid inside single quotes.
           "\\q",     "\\`",  // Unknown escapes.
           "\\x4",    "\\xg0",   "\\u12",       "\\u123g",     "\\U0001F60",  // Short or non-hex.
           "\\ud800", "\\uDFFF", "\\U00110000", "\\Uffffffff",                // Not valid runes.
           "\\400",   "\\18",    "\\1",         "\\9",                        // Bad octal.
       }) {
    EXPECT_EQ(UnquoteName(bad), std::nullopt) << bad;
  }
}

TEST(GoJsonName, UnquoteInvalidUtf8BecomesReplacementCharacter) {
  // Go's escape-processing path decodes raw non-ASCII input rune by rune.
  EXPECT_EQ(UnquoteName("a\xff-z"), "a\xef\xbf\xbd-z");
  EXPECT_EQ(UnquoteName("\\x41\xed\xa0\x80"), "A\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(GoJsonName, UnquoteAcceptsRusticEscaping) {
  // rustic escapes only \\ \" \a \b \f \n \r \t \v and invalid bytes as \xNN; controls and
  // non-printables stay raw (as rustic reads them).
  EXPECT_EQ(UnquoteName(R"(\\)"), "\\");
  EXPECT_EQ(UnquoteName(R"(\")"), "\"");
  EXPECT_EQ(UnquoteName("'"), "'");
  EXPECT_EQ(UnquoteName("`"), "`");
  EXPECT_EQ(UnquoteName(R"(\xab\xc2\xff)"), "\xab\xc2\xff");
  EXPECT_EQ(UnquoteName("\xc3\x9f\xe2\x9d\xa4\xf0\x9f\x92\xaf"),
            "\xc3\x9f\xe2\x9d\xa4\xf0\x9f\x92\xaf");
  EXPECT_EQ(UnquoteName("ctl\x01x\x1b\xe2\x80\xa8"), "ctl\x01x\x1b\xe2\x80\xa8");
}

// Random names biased towards the interesting bytes: ASCII specials, controls, lone
// continuation and lead bytes, and valid sequences of every length.
std::string RandomName(std::mt19937_64& rng) {
  static const std::vector<std::string> kPieces = {"a",
                                                   "Z",
                                                   "0",
                                                   " ",
                                                   ".",
                                                   "\"",
                                                   "\\",
                                                   "<",
                                                   ">",
                                                   "&",
                                                   "'",
                                                   "\n",
                                                   "\t",
                                                   "\a",
                                                   "\x7f",
                                                   "\x01",
                                                   "\x1f",
                                                   "\xc3\xa9",
                                                   "\xc2\xa0",
                                                   "\xc2\xad",
                                                   "\xe2\x80\xa8",
                                                   "\xe2\x80\xa9",
                                                   "\xef\xbf\xbd",
                                                   "\xf0\x9f\x98\x80",
                                                   "\xf0\x9f\xab\xa0",
                                                   "\xf4\x8f\xbf\xbf",
                                                   "\xed\xa0\x80",
                                                   "\xc0\x80",
                                                   "\xe2\x82",
                                                   "\xf0\x9f\x98",
                                                   "\xee\x80\x80",
                                                   "\xe3\x80\x80"};
  std::string s;
  const size_t len = rng() % 24;
  for (size_t i = 0; i < len; ++i) {
    switch (rng() % 3) {
      case 0:
        s += static_cast<char>(rng() % 256);
        break;
      case 1:
        s += kPieces[rng() % kPieces.size()];
        break;
      default: {  // A random scalar value, UTF-8 encoded.
        char32_t cp = static_cast<char32_t>(rng() % 0x110000);
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        if (cp < 0x80) {
          s += static_cast<char>(cp);
        } else if (cp < 0x800) {
          s += static_cast<char>(0xC0 | cp >> 6);
          s += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          s += static_cast<char>(0xE0 | cp >> 12);
          s += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
          s += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          s += static_cast<char>(0xF0 | cp >> 18);
          s += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
          s += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
          s += static_cast<char>(0x80 | (cp & 0x3F));
        }
      }
    }
  }
  return s;
}

TEST(GoJsonName, QuoteUnquoteRoundTripProperty) {
  std::mt19937_64 rng(20260101);
  for (int i = 0; i < 10000; ++i) {
    const std::string raw = RandomName(rng);
    const std::string quoted = QuoteName(raw);
    ASSERT_EQ(UnquoteName(quoted), raw) << i << ": " << quoted;
    // Quote's output is valid UTF-8 with no raw '"', newline or other non-printable.
    ASSERT_TRUE(IsValidUtf8(quoted)) << quoted;
    for (unsigned char c : quoted) ASSERT_TRUE(c >= 0x20 && c != 0x7f) << quoted;
    // The one-pass node-name encoder equals JSON(Quote(raw)).
    std::string direct;
    AppendNameString(direct, raw);
    ASSERT_EQ(direct, NameJson(raw)) << quoted;
  }
}

// ---- JSON strings (docs/format.md §10.4, go1.19) ----

TEST(GoJsonString, Escapes) {
  EXPECT_EQ(Json(""), R"("")");
  EXPECT_EQ(Json("hello/world"), R"("hello/world")");
  EXPECT_EQ(Json("\"\\"), R"("\"\\")");
  EXPECT_EQ(Json("\n\r\t"), R"("\n\r\t")");
  EXPECT_EQ(Json("\x08\x0c"), R"("\u0008\u000c")");  // go1.19: no \b or \f.
  EXPECT_EQ(Json("\x00\x01\x1f"s), R"("\u0000\u0001\u001f")");
  EXPECT_EQ(Json("\x7f"), "\"\x7f\"");  // DEL stays raw.
  EXPECT_EQ(Json("<a&b>"), R"("\u003ca\u0026b\u003e")");
  EXPECT_EQ(Json("\xe2\x80\xa8\xe2\x80\xa9"), R"("\u2028\u2029")");
  EXPECT_EQ(Json("caf\xc3\xa9 \xf0\x9f\x98\x80 \xc2\xa0"),
            "\"caf\xc3\xa9 \xf0\x9f\x98\x80 \xc2\xa0\"");
  EXPECT_EQ(Json("\xef\xbf\xbd"), "\"\xef\xbf\xbd\"");  // A real U+FFFD stays raw.
  EXPECT_EQ(Json("'`"), "\"'`\"");
}

TEST(GoJsonString, InvalidUtf8BytesBecomeReplacementEscape) {
  EXPECT_EQ(Json("\xff"), R"("\ufffd")");
  EXPECT_EQ(Json("\xe2\x82"), R"("\ufffd\ufffd")");
  EXPECT_EQ(Json("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  EXPECT_EQ(Json("\xc0\x80x"), R"("\ufffd\ufffdx")");
  EXPECT_EQ(Json("\xe2\xc3\xa9"), "\"\\ufffd\xc3\xa9\"");
}

TEST(GoJsonString, ObservedLinkTarget) {
  // restic 0.14 stored a symlink target "tgt" + 0xff + 0x08 as "tgt\ufffd\u0008".
  EXPECT_EQ(Json("tgt\xff\x08"), R"("tgt\ufffd\u0008")");
}

TEST(GoJsonString, AppendsToExistingBuffer) {
  std::string out = "{\"a\":";
  AppendString(out, "x<y");
  out += '}';
  EXPECT_EQ(out, R"({"a":"x\u003cy"})");
}

TEST(GoJsonString, ObservedNodeBytes) {
  // The node of docs/format.md §10.2's serialisation KAT, rebuilt from its parts.
  const std::string expected =
      R"({"name":"d.txt","type":"file","mode":420,"mtime":"2026-11-30T00:15:17.213751974Z",)"
      R"("atime":"2026-11-30T00:15:17.213751974Z","ctime":"2026-11-30T00:15:17.213751974Z",)"
      R"("uid":0,"gid":0,"user":"root","group":"root","inode":10970374,"device_id":65024,)"
      R"("size":5,"links":1,"content":["64896f89fd11190013b70103e603a1c5826e56b7fb7d2197ab)"
      R"(279b0690043599"]})";
  const Timestamp t{1795997717, 213751974, 0};
  std::string out = "{\"name\":";
  AppendNameString(out, "d.txt");
  out += ",\"type\":";
  AppendString(out, "file");
  out += ",\"mode\":420";
  for (const char* field : {"mtime", "atime", "ctime"}) {
    out += ",\"";
    out += field;
    out += "\":\"";
    AppendTime(out, t);
    out += '"';
  }
  out += R"(,"uid":0,"gid":0,"user":)";
  AppendString(out, "root");
  out += ",\"group\":";
  AppendString(out, "root");
  out += R"(,"inode":10970374,"device_id":65024,"size":5,"links":1,"content":[)";
  AppendString(out, "64896f89fd11190013b70103e603a1c5826e56b7fb7d2197ab279b0690043599");
  out += "]}";
  EXPECT_EQ(out, expected);
}

// ---- UTF-8 and printability ----

TEST(GoJsonUnicode, IsValidUtf8) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii that is longer than eight bytes"));
  EXPECT_TRUE(IsValidUtf8("\x00\x7f"s));
  EXPECT_TRUE(IsValidUtf8("\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80"));
  EXPECT_TRUE(IsValidUtf8("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\xef\xbf\xbd"));
  for (const char* bad :
       {"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xc2", "\xc2-", "\xe0\x9f\xbf", "\xed\xa0\x80",
        "\xed\xbf\xbf", "\xef\xbf", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
        "\xff", "01234567\xff", "0123456\xe2\x82"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
}

TEST(GoJsonUnicode, PrintableTableIsWellFormed) {
  const auto ranges = PrintableRanges();
  ASSERT_FALSE(ranges.empty());
  uint64_t total = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_LE(ranges[i].lo, ranges[i].hi);
    EXPECT_LE(ranges[i].hi, 0x10FFFFu);
    if (i > 0) {
      EXPECT_GT(ranges[i].lo, ranges[i - 1].hi + 1) << i;  // Sorted and merged.
    }
    EXPECT_TRUE(ranges[i].hi < 0xD800 || ranges[i].lo > 0xDFFF) << i;
    total += ranges[i].hi - ranges[i].lo + 1;
  }
  // Number of code points go1.19's strconv.IsPrint accepts (Unicode 13.0.0).
  EXPECT_EQ(total, 143680u);
}

TEST(GoJsonUnicode, IsPrintMatchesTableAndGoSpotChecks) {
  // The Latin-1 shortcut must agree with the generated table.
  const auto ranges = PrintableRanges();
  auto in_table = [&](char32_t cp) {
    for (const auto& r : ranges) {
      if (cp >= r.lo && cp <= r.hi) return true;
    }
    return false;
  };
  for (char32_t cp = 0; cp < 0x400; ++cp) {
    EXPECT_EQ(IsPrint(cp), in_table(cp)) << static_cast<uint32_t>(cp);
  }

  EXPECT_TRUE(IsPrint(' '));
  EXPECT_TRUE(IsPrint('~'));
  EXPECT_FALSE(IsPrint(0x7f));
  EXPECT_FALSE(IsPrint(0xa0));  // NBSP (Zs).
  EXPECT_FALSE(IsPrint(0xad));  // Soft hyphen (Cf).
  EXPECT_TRUE(IsPrint(0xe9));
  EXPECT_FALSE(IsPrint(0x1680));  // Ogham space mark (Zs).
  EXPECT_FALSE(IsPrint(0x2028));
  EXPECT_FALSE(IsPrint(0x3000));
  EXPECT_FALSE(IsPrint(0xd800));
  EXPECT_FALSE(IsPrint(0xe000));
  EXPECT_TRUE(IsPrint(0xfffd));
  EXPECT_FALSE(IsPrint(0xfffe));
  EXPECT_TRUE(IsPrint(0x1f600));
  EXPECT_TRUE(IsPrint(0x30000));   // CJK Extension G start (13.0).
  EXPECT_TRUE(IsPrint(0x3134a));   // CJK Extension G end.
  EXPECT_FALSE(IsPrint(0x31350));  // CJK Extension H (15.0).
  EXPECT_FALSE(IsPrint(0x1fae0));  // 14.0.
  EXPECT_TRUE(IsPrint(0xe0100));   // Variation selector (Mn).
  EXPECT_FALSE(IsPrint(0xe0001));  // Language tag (Cf).
  EXPECT_FALSE(IsPrint(0x10ffff));
  EXPECT_FALSE(IsPrint(0x110000));
  EXPECT_FALSE(IsPrint(0xffffffff));
}

// ---- Timestamps (docs/format.md §10.5) ----

TEST(GoJsonTime, FormatExamples) {
  EXPECT_EQ(FormatTime({1795997789, 837161425, 19800}), "2026-11-30T05:46:29.837161425+05:30");
  EXPECT_EQ(FormatTime({1704161046, 0, 3600}), "2024-01-02T03:04:06+01:00");
  EXPECT_EQ(FormatTime({1795997719, 977915833, 0}), "2026-11-30T00:15:19.977915833Z");
  EXPECT_EQ(FormatTime({0, 0, 0}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatTime({0, 0, -18000}), "1969-12-31T19:00:00-05:00");
  EXPECT_EQ(FormatTime({0, 0, 50400}), "1970-01-01T14:00:00+14:00");
  EXPECT_EQ(FormatTime({-1, 0, 0}), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatTime({-1, 999999999, 0}), "1969-12-31T23:59:59.999999999Z");
  EXPECT_EQ(FormatTime({-62135596800, 0, 0}), "0001-01-01T00:00:00Z");
  EXPECT_EQ(FormatTime({253402300799, 0, 0}), "9999-12-31T23:59:59Z");
}

TEST(GoJsonTime, FractionTrimming) {
  EXPECT_EQ(FormatTime({0, 500000000, 0}), "1970-01-01T00:00:00.5Z");
  EXPECT_EQ(FormatTime({0, 120000000, 0}), "1970-01-01T00:00:00.12Z");
  EXPECT_EQ(FormatTime({0, 100, 0}), "1970-01-01T00:00:00.0000001Z");
  EXPECT_EQ(FormatTime({0, 1, 0}), "1970-01-01T00:00:00.000000001Z");
  EXPECT_EQ(FormatTime({0, 0, 0}), "1970-01-01T00:00:00Z");
}

TEST(GoJsonTime, OffsetsWithSecondsPrintWholeMinutes) {
  // Go prints offset/60 minutes (truncated) and Z only for an offset of exactly 0.
  EXPECT_EQ(FormatTime({0, 0, 1172}), "1970-01-01T00:19:32+00:19");  // Amsterdam LMT.
  EXPECT_EQ(FormatTime({0, 0, -30}), "1969-12-31T23:59:30+00:00");
  EXPECT_EQ(FormatTime({0, 0, -90}), "1969-12-31T23:58:30-00:01");
}

TEST(GoJsonTime, NanosecondsAreNormalised) {
  EXPECT_EQ(FormatTime({0, 1500000000, 0}), "1970-01-01T00:00:01.5Z");
  EXPECT_EQ(FormatTime({0, -1, 0}), "1969-12-31T23:59:59.999999999Z");
}

TEST(GoJsonTime, YearsAreClamped) {
  EXPECT_EQ(FormatTime({-62167219200, 0, 0}), "0000-01-01T00:00:00Z");
  EXPECT_EQ(FormatTime({-62167219201, 0, 0}), "0000-12-31T23:59:59Z");  // Year -1.
  EXPECT_EQ(FormatTime({-62288308800, 0, 0}), "0000-02-29T12:00:00Z");  // -4 and 0 leap.
  EXPECT_EQ(FormatTime({-62193744000, 7, 0}), "0000-02-28T00:00:00.000000007Z");
  EXPECT_EQ(FormatTime({253402300800, 0, 0}), "9999-01-01T00:00:00Z");  // Year 10000.
  EXPECT_EQ(FormatTime({253407402123, 0, 0}), "9999-03-01T01:02:03Z");  // 10000-02-29.
  // Clamping looks at the year in the displayed zone.
  EXPECT_EQ(FormatTime({253402300799, 0, 3600}), "9999-01-01T00:59:59+01:00");
  EXPECT_EQ(FormatTime({-62167219200, 0, -3600}), "0000-12-31T23:00:00-01:00");
  // Extremes do not overflow.
  EXPECT_EQ(FormatTime({INT64_MAX, 999999999, 50400}).substr(0, 5), "9999-");
  EXPECT_EQ(FormatTime({INT64_MIN, 0, -50400}).substr(0, 5), "0000-");
  EXPECT_EQ(FormatTime({INT64_MAX, INT32_MAX, INT32_MAX}).substr(0, 5), "9999-");
}

TEST(GoJsonTime, ParseExamples) {
  EXPECT_EQ(ParseTime("2026-11-30T05:46:29.837161425+05:30"),
            (Timestamp{1795997789, 837161425, 19800}));
  EXPECT_EQ(ParseTime("2024-01-02T03:04:06+01:00"), (Timestamp{1704161046, 0, 3600}));
  EXPECT_EQ(ParseTime("1970-01-01T00:00:00Z"), (Timestamp{0, 0, 0}));
  EXPECT_EQ(ParseTime("1969-12-31T19:00:00-05:00"), (Timestamp{0, 0, -18000}));
  EXPECT_EQ(ParseTime("1970-01-01T00:00:00.5Z"), (Timestamp{0, 500000000, 0}));
  EXPECT_EQ(ParseTime("1970-01-01T00:00:00.500000000Z"), (Timestamp{0, 500000000, 0}));
  EXPECT_EQ(ParseTime("1970-01-01T00:00:00.000000001Z"), (Timestamp{0, 1, 0}));
  EXPECT_EQ(ParseTime("1970-01-01T00:00:00+00:00"), (Timestamp{0, 0, 0}));
  EXPECT_EQ(ParseTime("0000-01-01T00:00:00Z"), (Timestamp{-62167219200, 0, 0}));
  EXPECT_EQ(ParseTime("9999-12-31T23:59:59Z"), (Timestamp{253402300799, 0, 0}));
  EXPECT_EQ(ParseTime("2024-02-29T00:00:00Z")->sec, 1709164800);
  // More than nine fraction digits: truncated, as Go does.
  EXPECT_EQ(ParseTime("1970-01-01T00:00:00.1234567891Z"), (Timestamp{0, 123456789, 0}));
}

TEST(GoJsonTime, ParseRejects) {
  for (const char* bad : {"",
                          "2024-01-02",
                          "2024-01-02T03:04:05",
                          "2024-01-02T03:04:05z",
                          "2024-01-02t03:04:05Z",
                          "2024-01-02 03:04:05Z",
                          " 2024-01-02T03:04:05Z",
                          "2024-01-02T03:04:05Z ",
                          "2024-01-02T03:04:05.Z",
                          "2024-01-02T03:04:05,5Z",
                          "2024-01-02T03:04:05+0100",
                          "2024-01-02T03:04:05+01",
                          "2024-01-02T03:04:05+01:0",
                          "2024-01-02T03:04:05+24:00",
                          "2024-01-02T03:04:05+01:60",
                          "2024-01-02T03:04:05-1:00",
                          "2024-13-02T03:04:05Z",
                          "2024-00-02T03:04:05Z",
                          "2024-01-00T03:04:05Z",
                          "2024-01-32T03:04:05Z",
                          "2023-02-29T03:04:05Z",
                          "2100-02-29T03:04:05Z",
                          "2024-04-31T03:04:05Z",
                          "2024-01-02T24:00:00Z",
                          "2024-01-02T03:60:05Z",
                          "2024-01-02T03:04:60Z",
                          "20240-01-02T03:04:05Z",
                          "-001-01-02T03:04:05Z",
                          "+2024-01-02T03:04:05Z",
                          "2024-1-02T03:04:05Z",
                          "2024-01-02T03:04:05ZZ",
                          "\"2024-01-02T03:04:05Z\""}) {
    EXPECT_EQ(ParseTime(bad), std::nullopt) << bad;
  }
  EXPECT_TRUE(ParseTime("2000-02-29T00:00:00Z").has_value());
}

TEST(GoJsonTime, FormatParseRoundTrip) {
  std::mt19937_64 rng(7);
  const int64_t kMin = -62167219200 + 86400;  // Keep clear of clamping in any zone.
  const int64_t kMax = 253402300799 - 86400;
  for (int i = 0; i < 10000; ++i) {
    Timestamp t;
    t.sec = kMin + static_cast<int64_t>(rng() % static_cast<uint64_t>(kMax - kMin));
    switch (rng() % 3) {
      case 0:
        t.nsec = 0;
        break;
      case 1:
        t.nsec = static_cast<int32_t>(rng() % 1000) * 1000000;
        break;
      default:
        t.nsec = static_cast<int32_t>(rng() % 1000000000);
    }
    t.offset = static_cast<int32_t>(rng() % (2 * 14 * 60 + 1)) * 60 - 14 * 3600;
    const std::string text = FormatTime(t);
    const auto parsed = ParseTime(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    ASSERT_EQ(*parsed, t) << text;
    ASSERT_EQ(FormatTime(*parsed), text);
  }
}

TEST(GoJsonTime, AppendTimeAppends) {
  std::string out = "\"";
  AppendTime(out, {1704161046, 0, 3600});
  out += '"';
  EXPECT_EQ(out, "\"2024-01-02T03:04:06+01:00\"");
}

// Sets TZ for one test and restores it afterwards.
class ScopedTz {
 public:
  explicit ScopedTz(const char* tz) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ScopedTz() {
    if (old_) {
      setenv("TZ", old_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  std::optional<std::string> old_;
};

TEST(GoJsonTime, LocalTimeUsesProcessZone) {
  LocalTime(0, 0);  // Let its one-time tzset() happen before the zone is changed.
  {
    ScopedTz tz("IST-5:30");  // POSIX rule, needs no tzdata: UTC+05:30.
    EXPECT_EQ(LocalTime(1795997789, 837161425), (Timestamp{1795997789, 837161425, 19800}));
    EXPECT_EQ(FormatTime(LocalTime(1795997789, 837161425)), "2026-11-30T05:46:29.837161425+05:30");
  }
  {
    ScopedTz tz("EST5EDT,M3.2.0,M11.1.0");
    EXPECT_EQ(LocalTime(1704161046, 0).offset, -18000);  // January: EST.
    EXPECT_EQ(LocalTime(1720000000, 0).offset, -14400);  // July: EDT.
  }
  {
    ScopedTz tz("UTC0");
    EXPECT_EQ(FormatTime(LocalTime(0, 0)), "1970-01-01T00:00:00Z");
  }
}

TEST(GoJsonStringList, NilIsNullEmptyIsBracketsAndElementsAreQuoted) {
  std::string out;
  AppendStringList(out, std::optional<std::vector<std::string>>());
  EXPECT_EQ(out, "null");
  out.clear();
  AppendStringList(out, std::optional<std::vector<std::string>>(std::vector<std::string>{}));
  EXPECT_EQ(out, "[]");
  out.clear();
  AppendStringList(out, std::vector<std::string>{"a", "b\"c", "<"});
  EXPECT_EQ(out, "[\"a\",\"b\\\"c\",\"\\u003c\"]");
}

}  // namespace
}  // namespace haven::gojson
