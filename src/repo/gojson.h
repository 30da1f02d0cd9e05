// Byte-exact reproductions of the Go encodings that feed restic tree IDs (docs/format.md §10.3-10.5):
// strconv.Quote/Unquote for node names, encoding/json string literals (go1.19, HTML-safe) and
// time.Time's RFC 3339 JSON form.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <string_view>

namespace haven::gojson {

// ---- Unicode -------------------------------------------------------------------------------

// Go's utf8.ValidString: rejects surrogates, overlong forms, code points > U+10FFFF and
// truncated sequences.
bool IsValidUtf8(std::string_view s);

// Go's unicode.IsPrint with go1.19's tables (Unicode 13.0.0): categories L, M, N, P, S and
// U+0020. False for surrogates and values > U+10FFFF.
bool IsPrint(char32_t cp);

// Inclusive code point range.
struct CodeRange {
  char32_t lo;
  char32_t hi;
};
// The generated table behind IsPrint (unicode_print.cc): sorted, disjoint, non-adjacent.
std::span<const CodeRange> PrintableRanges();

// ---- Names: strconv.Quote / Unquote --------------------------------------------------------

// Go strconv.Quote(raw) without the surrounding quotes: the value restic stores in a node's
// "name" field (before JSON encoding). Invalid UTF-8 bytes become \xNN (lowercase).
std::string QuoteName(std::string_view raw);
// Appends QuoteName(raw) to out.
void AppendQuotedName(std::string& out, std::string_view raw);

// Go strconv.Unquote('"' + quoted + '"'): the raw name bytes, or nullopt if invalid (raw '"' or
// newline, unknown escape or \', bad hex/octal, \u or \U naming a surrogate or > U+10FFFF).
// Accepts rustic's escaping too (a subset). Like Go, an input that needs the escape-processing
// path has its invalid UTF-8 bytes replaced by U+FFFD.
std::optional<std::string> UnquoteName(std::string_view quoted);

// ---- JSON strings: encoding/json.Marshal (go1.19) ------------------------------------------

// Appends s as a JSON string literal, quotes included, exactly as go1.19 json.Marshal: '"' and
// '\' escaped, \n \r \t short, other bytes < 0x20 as \u00xx (so 0x08 -> \u0008), '<' '>' '&'
// as \u003c \u003e \u0026, U+2028/U+2029 as \u2028/\u2029, each invalid UTF-8 byte as \ufffd,
// everything else (including 0x7f) raw.
void AppendString(std::string& out, std::string_view s);
// json.Marshal of a []string; the optional form writes null for nil (absent).
void AppendStringList(std::string& out, const std::vector<std::string>& v);
void AppendStringList(std::string& out, const std::optional<std::vector<std::string>>& v);

// AppendString(out, QuoteName(raw)) without the intermediate string: a node's "name" value.
void AppendNameString(std::string& out, std::string_view raw);

// ---- Timestamps: time.Time MarshalJSON -----------------------------------------------------

struct Timestamp {
  int64_t sec = 0;     // Unix seconds (UTC instant).
  int32_t nsec = 0;    // 0..999'999'999.
  int32_t offset = 0;  // Seconds east of UTC used for display.

  friend bool operator==(const Timestamp&, const Timestamp&) = default;
  // For utimensat/futimens.
  struct timespec ToTimespec() const {
    struct timespec ts;
    ts.tv_sec = sec;
    ts.tv_nsec = nsec;
    return ts;
  }
};

// RFC 3339 with nanoseconds as Go's time.Time MarshalJSON, without quotes:
// YYYY-MM-DDTHH:MM:SS[.fraction, trailing zeros trimmed](Z|±HH:MM). The offset prints as whole
// minutes truncated toward zero; it prints Z only when it is exactly 0. Years outside
// 0000..9999 (in the displayed zone) are clamped into that range as restic's fixTime does: only
// the year changes, and Feb 29 moved into a non-leap year becomes Mar 1. An nsec outside
// [0, 1e9) is normalised into sec first.
void AppendTime(std::string& out, const Timestamp& t);
std::string FormatTime(const Timestamp& t);

// Parses YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM). The fraction has 0-9 digits (a dot needs
// at least one; further digits are accepted and truncated, as Go does). Validates field
// ranges (day within month, hour <= 23, minute/second <= 59, offset hours <= 23 and minutes
// <= 59). nullopt on anything else.
std::optional<Timestamp> ParseTime(std::string_view s);

// The instant in the process's local time zone (offset from localtime_r's tm_gmtoff), like
// Go's time.Local. Offset 0 if the zone cannot be determined for that instant.
Timestamp LocalTime(int64_t sec, int32_t nsec);

}  // namespace haven::gojson
