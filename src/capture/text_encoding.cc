#include "capture/text_encoding.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace haven::capture {

namespace {

// A low byte UTF-16 of ASCII text holds: tab, line ends, printable ASCII, or above (Latin-1
// letters).
bool TextByte(unsigned char c) { return c == '\t' || c == '\n' || c == '\r' || c >= 0x20; }

// UTF-16 without a mark: of the code units in the first 8 KiB, the `high` byte of all but
// 1 in 50 is NUL and the low byte of every NUL-high unit is text.
bool Utf16Ascii(std::string_view head, size_t high) {
  const size_t units = std::min<size_t>(head.size(), 8192) / 2;
  if (units < 16) return false;
  const size_t allowed = units / 50;
  size_t other = 0;
  for (size_t u = 0; u < units; ++u) {
    const unsigned char hi = static_cast<unsigned char>(head[2 * u + high]);
    const unsigned char lo = static_cast<unsigned char>(head[2 * u + 1 - high]);
    if (hi != 0) {
      if (++other > allowed) return false;
    } else if (!TextByte(lo)) {
      return false;  // (NUL NUL, or a control character: binary)
    }
  }
  return true;
}

void AppendCodePoint(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | cp >> 6));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | cp >> 12));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | cp >> 18));
    out.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

constexpr uint32_t kReplacement = 0xfffd;

}  // namespace

TextEncoding DetectTextEncoding(std::string_view head, size_t* skip) {
  *skip = 0;
  if (head.starts_with("\xef\xbb\xbf")) {
    *skip = 3;
    return TextEncoding::kUtf8Bom;
  }
  if (head.starts_with("\xff\xfe") && !head.starts_with(std::string_view("\xff\xfe\0\0", 4))) {
    *skip = 2;  // (FF FE 00 00 is UTF-32's mark: left to LooksBinary)
    return TextEncoding::kUtf16Le;
  }
  if (head.starts_with("\xfe\xff")) {
    *skip = 2;
    return TextEncoding::kUtf16Be;
  }
  // (Most files hold no NUL: one memchr decides them.)
  const size_t probe = std::min<size_t>(head.size(), 8192);
  if (probe == 0 || std::memchr(head.data(), 0, probe) == nullptr) return TextEncoding::kUtf8;
  if (Utf16Ascii(head, 1)) return TextEncoding::kUtf16Le;
  if (Utf16Ascii(head, 0)) return TextEncoding::kUtf16Be;
  return TextEncoding::kUtf8;
}

size_t AppendUtf16AsUtf8(std::string_view raw, bool big, bool at_end, std::string& out) {
  auto unit = [&](size_t i) -> uint32_t {
    const auto a = static_cast<unsigned char>(raw[i]), b = static_cast<unsigned char>(raw[i + 1]);
    return big ? (a << 8 | b) : (b << 8 | a);
  };
  size_t i = 0;
  while (i + 2 <= raw.size()) {
    const uint32_t u = unit(i);
    if (u >= 0xd800 && u < 0xdc00) {  // a high surrogate: its low one must follow
      if (i + 4 > raw.size()) {
        if (!at_end) break;
        AppendCodePoint(kReplacement, out);
        i += 2;
        continue;
      }
      const uint32_t lo = unit(i + 2);
      if (lo >= 0xdc00 && lo < 0xe000) {
        AppendCodePoint(0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00), out);
        i += 4;
      } else {
        AppendCodePoint(kReplacement, out);
        i += 2;
      }
      continue;
    }
    AppendCodePoint(u >= 0xdc00 && u < 0xe000 ? kReplacement : u, out);
    i += 2;
  }
  if (at_end && i < raw.size()) {  // an odd last byte
    AppendCodePoint(kReplacement, out);
    i = raw.size();
  }
  return i;
}

namespace {

// The value of four hex digits at `s`, or -1.
long Hex4(std::string_view s) {
  if (s.size() < 4) return -1;
  long v = 0;
  for (size_t i = 0; i < 4; ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

bool HasUnicodeEscapes(std::string_view head) {
  for (size_t i = head.find('\\'); i != std::string_view::npos; i = head.find('\\', i + 1)) {
    if (i + 1 < head.size() && head[i + 1] == '/') return true;
    if (i + 1 < head.size() && head[i + 1] == 'u' && Hex4(head.substr(i + 2)) >= 0x20) return true;
  }
  return false;
}

size_t AppendUnescaped(std::string_view raw, bool at_end, std::string& out) {
  size_t i = 0;
  while (i < raw.size()) {
    const size_t bs = raw.find('\\', i);
    if (bs == std::string_view::npos) {
      out.append(raw.substr(i));
      return raw.size();
    }
    out.append(raw.substr(i, bs - i));
    i = bs;
    // The longest escape read is 12 bytes (a surrogate pair): one cut by the end waits.
    if (!at_end && raw.size() - i < 12) return i;
    if (i + 1 < raw.size() && raw[i + 1] == '\\') {  // an escaped backslash stays as written
      out.append("\\\\");
      i += 2;
      continue;
    }
    if (i + 1 < raw.size() && raw[i + 1] == '/') {
      out.push_back('/');
      i += 2;
      continue;
    }
    const long u = i + 1 < raw.size() && raw[i + 1] == 'u' ? Hex4(raw.substr(i + 2)) : -1;
    if (u >= 0xd800 && u < 0xdc00 && i + 12 <= raw.size() && raw[i + 6] == '\\' &&
        raw[i + 7] == 'u') {
      const long lo = Hex4(raw.substr(i + 8));
      if (lo >= 0xdc00 && lo < 0xe000) {
        AppendCodePoint(static_cast<uint32_t>(0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00)), out);
        i += 12;
        continue;
      }
    }
    if (u >= 0x20 && (u < 0xd800 || u >= 0xe000)) {
      AppendCodePoint(static_cast<uint32_t>(u), out);
      i += 6;
      continue;
    }
    out.push_back('\\');  // anything else stays as written
    ++i;
  }
  return i;
}

}  // namespace haven::capture
