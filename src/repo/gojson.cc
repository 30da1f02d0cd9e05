#include "repo/gojson.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>
#include <mutex>

namespace haven::gojson {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Byte classes for the copy-through fast paths. A byte is "plain" if the encoder copies it
// unchanged without looking further.
enum : uint8_t {
  kQuotePlain = 1,  // strconv.Quote: printable ASCII other than '"' and '\'.
  kJsonPlain = 2,   // encoding/json: ASCII >= 0x20 other than '"', '\', '<', '>', '&'.
  kNamePlain = 4,   // Both of the above: JSON(Quote(b)) == b.
};

constexpr std::array<uint8_t, 256> MakeByteClasses() {
  std::array<uint8_t, 256> t{};
  for (int b = 0x20; b < 0x80; ++b) {
    bool special = b == '"' || b == '\\';
    bool html = b == '<' || b == '>' || b == '&';
    if (!special && b != 0x7f) t[b] |= kQuotePlain;
    if (!special && !html) t[b] |= kJsonPlain;
    if ((t[b] & kQuotePlain) && (t[b] & kJsonPlain)) t[b] |= kNamePlain;
  }
  return t;
}
constexpr std::array<uint8_t, 256> kByteClass = MakeByteClasses();

// Decodes the UTF-8 sequence starting at p[0] (n >= 1 bytes available) as Go's
// utf8.DecodeRune does. Returns its length and sets cp, or returns 0 if it is invalid
// (surrogate, overlong, > U+10FFFF, bad or missing continuation byte); Go then consumes one
// byte.
inline size_t DecodeRune(const uint8_t* p, size_t n, char32_t& cp) {
  const uint8_t b0 = p[0];
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  if (b0 < 0xC2) return 0;  // Continuation byte or overlong 2-byte lead.
  auto cont = [](uint8_t b) { return (b & 0xC0) == 0x80; };
  if (b0 < 0xE0) {
    if (n < 2 || !cont(p[1])) return 0;
    cp = char32_t(b0 & 0x1F) << 6 | (p[1] & 0x3F);
    return 2;
  }
  if (b0 < 0xF0) {
    // E0: A0..BF (no overlong); ED: 80..9F (no surrogates).
    const uint8_t lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    if (n < 3 || p[1] < lo || p[1] > hi || !cont(p[2])) return 0;
    cp = char32_t(b0 & 0x0F) << 12 | char32_t(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
    return 3;
  }
  if (b0 < 0xF5) {
    // F0: 90..BF (no overlong); F4: 80..8F (<= U+10FFFF).
    const uint8_t lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    if (n < 4 || p[1] < lo || p[1] > hi || !cont(p[2]) || !cont(p[3])) return 0;
    cp = char32_t(b0 & 0x07) << 18 | char32_t(p[1] & 0x3F) << 12 | char32_t(p[2] & 0x3F) << 6 |
         (p[3] & 0x3F);
    return 4;
  }
  return 0;
}

void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    const char b[] = {char(0xC0 | cp >> 6), char(0x80 | (cp & 0x3F))};
    out.append(b, 2);
  } else if (cp < 0x10000) {
    const char b[] = {char(0xE0 | cp >> 12), char(0x80 | (cp >> 6 & 0x3F)),
                      char(0x80 | (cp & 0x3F))};
    out.append(b, 3);
  } else {
    const char b[] = {char(0xF0 | cp >> 18), char(0x80 | (cp >> 12 & 0x3F)),
                      char(0x80 | (cp >> 6 & 0x3F)), char(0x80 | (cp & 0x3F))};
    out.append(b, 4);
  }
}

// Appends `digits` lowercase hex digits of v.
void AppendHex(std::string& out, uint32_t v, int digits) {
  char buf[8];
  for (int i = digits - 1; i >= 0; --i, v >>= 4) buf[i] = kHexDigits[v & 15];
  out.append(buf, digits);
}

// strconv.Quote's escaping, optionally followed by encoding/json's escaping of that output
// (kJson) so that a node's "name" value is produced in one pass.
template <bool kJson>
class QuoteWriter {
 public:
  explicit QuoteWriter(std::string& out) : out_(out) {}

  void Run(std::string_view raw) {
    const auto* p = reinterpret_cast<const uint8_t*>(raw.data());
    const size_t n = raw.size();
    constexpr uint8_t kPlain = kJson ? kNamePlain : kQuotePlain;
    size_t start = 0, i = 0;
    while (i < n) {
      const uint8_t b = p[i];
      if (kByteClass[b] & kPlain) {
        ++i;
        continue;
      }
      char32_t cp = b;
      const size_t width = b < 0x80 ? 1 : DecodeRune(p + i, n - i, cp);
      if (width > 1 && IsPrint(cp)) {  // Printable non-ASCII (Quote and JSON copy it raw).
        i += width;
        continue;
      }
      out_.append(raw.data() + start, i - start);
      if (width == 0) {
        Escape('x');
        AppendHex(out_, b, 2);
        i += 1;
      } else {
        EscapeRune(cp);
        i += width;
      }
      start = i;
    }
    out_.append(raw.data() + start, n - start);
  }

 private:
  // Emits '\' + c as Quote does (in JSON mode the backslash itself is escaped).
  void Escape(char c) {
    if constexpr (kJson) {
      out_.append("\\\\", 2);
    } else {
      out_ += '\\';
    }
    out_ += c;
  }

  // cp is an ASCII code point that is not "plain", or a non-printable code point.
  void EscapeRune(char32_t cp) {
    switch (cp) {
      case '"':
        if constexpr (kJson) {
          out_.append("\\\\\\\"", 4);
        } else {
          out_.append("\\\"", 2);
        }
        return;
      case '\\':
        if constexpr (kJson) {
          out_.append("\\\\\\\\", 4);
        } else {
          out_.append("\\\\", 2);
        }
        return;
      case '<':  // Only reached in JSON mode (printable for Quote, HTML-escaped by JSON).
        out_.append("\\u003c", 6);
        return;
      case '>':
        out_.append("\\u003e", 6);
        return;
      case '&':
        out_.append("\\u0026", 6);
        return;
      case '\a':
        return Escape('a');
      case '\b':
        return Escape('b');
      case '\f':
        return Escape('f');
      case '\n':
        return Escape('n');
      case '\r':
        return Escape('r');
      case '\t':
        return Escape('t');
      case '\v':
        return Escape('v');
      default:
        break;
    }
    if (cp < 0x20 || cp == 0x7f) {
      Escape('x');
      AppendHex(out_, cp, 2);
    } else if (cp < 0x10000) {
      Escape('u');
      AppendHex(out_, cp, 4);
    } else {
      Escape('U');
      AppendHex(out_, cp, 8);
    }
  }

  std::string& out_;
};

int HexValue(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// ---- Calendar arithmetic (proleptic Gregorian, year 0 exists) ----

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool IsLeap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of the given civil date. Works in 400-year eras of 146097 days, with
// years starting on March 1 so that the leap day is the last day of a year.
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = FloorDiv(y, 400);
  const int64_t year_of_era = y - era * 400;                             // 0..399
  const int64_t month_from_march = m > 2 ? m - 3 : m + 9;                // 0..11
  const int64_t day_of_year = (153 * month_from_march + 2) / 5 + d - 1;  // 0..365
  const int64_t day_of_era =
      year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;  // 0..146096
  return era * 146097 + day_of_era - 719468;  // 719468 = days from 0000-03-01 to 1970-01-01.
}

struct Civil {
  int64_t year;
  int month;
  int day;
};

Civil CivilFromDays(int64_t days) {
  days += 719468;
  const int64_t era = FloorDiv(days, 146097);
  const int64_t day_of_era = days - era * 146097;  // 0..146096
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // 0..365
  const int64_t month_from_march = (5 * day_of_year + 2) / 153;                // 0..11
  const int day = static_cast<int>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
  const int month =
      static_cast<int>(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
  return {year_of_era + era * 400 + (month <= 2), month, day};
}

// Parses exactly n decimal digits at s[pos...]; -1 if any is not a digit.
int64_t ParseDigits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

// ---- Unicode ----

bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    if (n - i >= 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    char32_t cp;
    const size_t width = DecodeRune(p + i, n - i, cp);
    if (width == 0) return false;
    i += width;
  }
  return true;
}

bool IsPrint(char32_t cp) {
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f;
  if (cp < 0x100) return cp >= 0xa1 && cp != 0xad;  // Latin-1: all but controls, NBSP, SHY.
  const auto ranges = PrintableRanges();
  const auto it = std::lower_bound(ranges.begin(), ranges.end(), cp,
                                   [](const CodeRange& r, char32_t v) { return r.hi < v; });
  return it != ranges.end() && it->lo <= cp;
}

// ---- Names ----

void AppendQuotedName(std::string& out, std::string_view raw) { QuoteWriter<false>(out).Run(raw); }

std::string QuoteName(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() + 8);
  AppendQuotedName(out, raw);
  return out;
}

std::optional<std::string> UnquoteName(std::string_view quoted) {
  const auto* p = reinterpret_cast<const uint8_t*>(quoted.data());
  const size_t n = quoted.size();
  // Go returns the text unchanged if it has no escapes, quotes or newlines and is valid UTF-8.
  bool plain = true;
  for (size_t i = 0; i < n && plain; ++i) {
    plain = p[i] != '\\' && p[i] != '"' && p[i] != '\n';
  }
  if (plain && IsValidUtf8(quoted)) return std::string(quoted);

  std::string out;
  out.reserve(n);
  size_t i = 0;
  while (i < n) {
    const uint8_t c = p[i];
    if (c == '"' || c == '\n') return std::nullopt;
    if (c >= 0x80) {  // Copied as a code point; an invalid byte becomes U+FFFD.
      char32_t cp;
      const size_t width = DecodeRune(p + i, n - i, cp);
      if (width == 0) {
        out.append("\xEF\xBF\xBD", 3);
        i += 1;
      } else {
        out.append(quoted.data() + i, width);
        i += width;
      }
      continue;
    }
    if (c != '\\') {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (i + 1 >= n) return std::nullopt;
    const char e = static_cast<char>(p[i + 1]);
    i += 2;
    switch (e) {
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
        out += '\\';
        break;
      case '"':
        out += '"';
        break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        if (n - i < digits) return std::nullopt;
        uint32_t v = 0;
        for (size_t j = 0; j < digits; ++j) {
          const int h = HexValue(p[i + j]);
          if (h < 0) return std::nullopt;
          v = v << 4 | static_cast<uint32_t>(h);
        }
        i += digits;
        if (e == 'x') {
          out += static_cast<char>(v);  // One raw byte, possibly not UTF-8.
        } else {
          if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return std::nullopt;
          AppendUtf8(out, v);
        }
        break;
      }
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        uint32_t v = static_cast<uint32_t>(e - '0');
        if (n - i < 2) return std::nullopt;
        for (size_t j = 0; j < 2; ++j) {
          if (p[i + j] < '0' || p[i + j] > '7') return std::nullopt;
          v = v << 3 | (p[i + j] - '0');
        }
        i += 2;
        if (v > 255) return std::nullopt;
        out += static_cast<char>(v);
        break;
      }
      default:  // Includes \' (only valid inside single quotes in Go).
        return std::nullopt;
    }
  }
  return out;
}

// ---- JSON strings ----

void AppendString(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  out += '"';
  size_t start = 0, i = 0;
  while (i < n) {
    const uint8_t b = p[i];
    if (kByteClass[b] & kJsonPlain) {
      ++i;
      continue;
    }
    if (b < 0x80) {
      out.append(s.data() + start, i - start);
      switch (b) {
        case '"':
          out.append("\\\"", 2);
          break;
        case '\\':
          out.append("\\\\", 2);
          break;
        case '\n':
          out.append("\\n", 2);
          break;
        case '\r':
          out.append("\\r", 2);
          break;
        case '\t':
          out.append("\\t", 2);
          break;
        default:  // Other controls and < > & (go1.19 has no \b or \f here).
          out.append("\\u00", 4);
          AppendHex(out, b, 2);
          break;
      }
      start = ++i;
      continue;
    }
    char32_t cp;
    const size_t width = DecodeRune(p + i, n - i, cp);
    if (width == 0) {
      out.append(s.data() + start, i - start);
      out.append("\\ufffd", 6);
      start = ++i;
    } else if (cp == 0x2028 || cp == 0x2029) {
      out.append(s.data() + start, i - start);
      out.append(cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
      start = i += width;
    } else {
      i += width;
    }
  }
  out.append(s.data() + start, n - start);
  out += '"';
}

void AppendNameString(std::string& out, std::string_view raw) {
  out += '"';
  QuoteWriter<true>(out).Run(raw);
  out += '"';
}

// ---- Timestamps ----

void AppendTime(std::string& out, const Timestamp& t) {
  int64_t sec = t.sec;
  int64_t nsec = t.nsec;
  if (nsec < 0 || nsec >= 1'000'000'000) {
    const int64_t carry = FloorDiv(nsec, 1'000'000'000);
    nsec -= carry * 1'000'000'000;
    if (__builtin_add_overflow(sec, carry, &sec)) sec = carry < 0 ? INT64_MIN : INT64_MAX;
  }
  // Split before adding the offset so that nothing overflows near the int64 limits.
  int64_t days = sec / 86400;
  int64_t second_of_day = sec % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    days -= 1;
  }
  second_of_day += t.offset;
  const int64_t day_carry = FloorDiv(second_of_day, 86400);
  days += day_carry;
  second_of_day -= day_carry * 86400;

  Civil date = CivilFromDays(days);
  if (date.year < 0 || date.year > 9999) {
    date.year = date.year < 0 ? 0 : 9999;
    if (date.month == 2 && date.day == 29 && !IsLeap(date.year)) {
      date.month = 3;
      date.day = 1;
    }
  }

  // Formatted into a local buffer and appended once (trees hold three stamps per node).
  // Widths: year 4 (0..9999), the rest 2; the zone hours fit 2 digits as in Go.
  char buf[48];
  size_t n = 0;
  auto digits = [&](int64_t v, int width) {
    char tmp[24];
    int k = 0;
    do {
      tmp[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v > 0);
    for (; k < width; ++k) tmp[k] = '0';
    while (k > 0) buf[n++] = tmp[--k];
  };
  digits(date.year, 4);
  buf[n++] = '-';
  digits(date.month, 2);
  buf[n++] = '-';
  digits(date.day, 2);
  buf[n++] = 'T';
  digits(second_of_day / 3600, 2);
  buf[n++] = ':';
  digits(second_of_day / 60 % 60, 2);
  buf[n++] = ':';
  digits(second_of_day % 60, 2);
  if (nsec != 0) {
    char frac[9];
    int64_t v = nsec;
    for (int i = 8; i >= 0; --i, v /= 10) frac[i] = static_cast<char>('0' + v % 10);
    int len = 9;
    while (frac[len - 1] == '0') --len;
    buf[n++] = '.';
    for (int i = 0; i < len; ++i) buf[n++] = frac[i];
  }
  if (t.offset == 0) {
    buf[n++] = 'Z';
    out.append(buf, n);
    return;
  }
  int64_t zone_minutes = t.offset / 60;  // Truncates toward zero, as Go does.
  if (zone_minutes < 0) {
    buf[n++] = '-';
    zone_minutes = -zone_minutes;
  } else {
    buf[n++] = '+';
  }
  digits(zone_minutes / 60, 2);
  buf[n++] = ':';
  digits(zone_minutes % 60, 2);
  out.append(buf, n);
}

std::string FormatTime(const Timestamp& t) {
  std::string out;
  out.reserve(35);
  AppendTime(out, t);
  return out;
}

std::optional<Timestamp> ParseTime(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  const int64_t year = ParseDigits(s, 0, 4), month = ParseDigits(s, 5, 2),
                day = ParseDigits(s, 8, 2), hour = ParseDigits(s, 11, 2),
                minute = ParseDigits(s, 14, 2), second = ParseDigits(s, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 ||
      day > DaysInMonth(year, static_cast<int>(month)) || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 59) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t nsec = 0;
  if (s[pos] == '.') {
    ++pos;
    size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) nsec = nsec * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (size_t k = digits; k < 9; ++k) nsec *= 10;
  }
  int64_t offset = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const bool negative = s[pos] == '-';
    if (pos + 6 > s.size() || s[pos + 3] != ':') return std::nullopt;
    const int64_t oh = ParseDigits(s, pos + 1, 2), om = ParseDigits(s, pos + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return std::nullopt;
    offset = (oh * 60 + om) * 60;
    if (negative) offset = -offset;
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;

  const int64_t local =
      DaysFromCivil(year, static_cast<int>(month), static_cast<int>(day)) * 86400 + hour * 3600 +
      minute * 60 + second;
  return Timestamp{local - offset, static_cast<int32_t>(nsec), static_cast<int32_t>(offset)};
}

Timestamp LocalTime(int64_t sec, int32_t nsec) {
  static std::once_flag tz_once;
  std::call_once(tz_once, [] { tzset(); });
  int32_t offset = 0;
  const time_t tt = static_cast<time_t>(sec);
  struct tm tm;
  if (static_cast<int64_t>(tt) == sec && localtime_r(&tt, &tm) != nullptr) {
    offset = static_cast<int32_t>(tm.tm_gmtoff);
  }
  return Timestamp{sec, nsec, offset};
}

void AppendStringList(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    AppendString(out, v[i]);
  }
  out += ']';
}

void AppendStringList(std::string& out, const std::optional<std::vector<std::string>>& v) {
  if (v) {
    AppendStringList(out, *v);
  } else {
    out += "null";
  }
}

}  // namespace haven::gojson
