#include "core/bytes.h"

#include <array>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace haven {

namespace {
constexpr char kHex[] = "0123456789abcdef";
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int B64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

void AppendHex(std::string& out, ByteView data) {
  const size_t at = out.size();
  out.resize(at + data.size() * 2);
  char* p = out.data() + at;
  for (uint8_t b : data) {
    *p++ = kHex[b >> 4];
    *p++ = kHex[b & 15];
  }
}

std::string HexEncode(ByteView data) {
  std::string out;
  AppendHex(out, data);
  return out;
}

// 0-15 for hex digits, 0xff for anything else.
constexpr std::array<uint8_t, 256> kHexTable = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    int v = HexValue(static_cast<char>(c));
    t[static_cast<size_t>(c)] = v < 0 ? 0xff : static_cast<uint8_t>(v);
  }
  return t;
}();

#if defined(__SSE2__)
namespace {

// Sixteen hex digits to their values (0..15); sets bytes of *bad for non-digits.
inline __m128i HexNibbles(__m128i c, __m128i* bad) {
  const __m128i d = _mm_sub_epi8(c, _mm_set1_epi8('0'));  // 0..9 for a digit
  const __m128i l = _mm_sub_epi8(_mm_or_si128(c, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
  // unsigned x <= k as min(x, k) == x
  const __m128i is_d = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
  const __m128i is_l = _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(5)), l);  // a-f, A-F
  *bad = _mm_or_si128(*bad, _mm_andnot_si128(_mm_or_si128(is_d, is_l), _mm_set1_epi8(-1)));
  return _mm_or_si128(_mm_and_si128(is_d, d),
                      _mm_and_si128(is_l, _mm_add_epi8(l, _mm_set1_epi8(10))));
}

// Pairs of nibbles (high first) in each 16-bit lane to one byte in the lane's low half.
inline __m128i HexPairs(__m128i v) {
  return _mm_and_si128(_mm_or_si128(_mm_slli_epi16(v, 4), _mm_srli_epi16(v, 8)),
                       _mm_set1_epi16(0x00ff));
}

}  // namespace
#endif

bool HexDecodeInto(std::string_view hex, uint8_t* out, size_t n) {
  if (hex.size() != 2 * n) return false;
  size_t i = 0;
#if defined(__SSE2__)
  // 32 digits (16 bytes) at a time: ids and keys are decoded in bulk (index files, trees).
  for (; i + 16 <= n; i += 16) {
    const char* p = hex.data() + 2 * i;
    __m128i bad = _mm_setzero_si128();
    __m128i a = HexNibbles(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), &bad);
    __m128i b = HexNibbles(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)), &bad);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_packus_epi16(HexPairs(a), HexPairs(b)));
    if (_mm_movemask_epi8(bad) != 0) return false;
  }
#endif
  uint8_t bad = 0;
  for (; i < n; ++i) {
    uint8_t hi = kHexTable[static_cast<uint8_t>(hex[2 * i])];
    uint8_t lo = kHexTable[static_cast<uint8_t>(hex[2 * i + 1])];
    bad |= hi | lo;  // 0xff marks a non-digit; digits never set bits 4-7
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return (bad & 0xf0) == 0;
}

std::optional<Bytes> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  Bytes out(hex.size() / 2);
  if (!HexDecodeInto(hex, out.data(), out.size())) return std::nullopt;
  return out;
}

std::string Base64Encode(ByteView data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = uint32_t(data[i]) << 16 | uint32_t(data[i + 1]) << 8 | data[i + 2];
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  size_t rest = data.size() - i;
  if (rest == 1) {
    uint32_t v = uint32_t(data[i]) << 16;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += "==";
  } else if (rest == 2) {
    uint32_t v = uint32_t(data[i]) << 16 | uint32_t(data[i + 1]) << 8;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<Bytes> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  Bytes out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      char c = text[i + j];
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        v[j] = 0;
        ++pad;
      } else {
        if (pad) return std::nullopt;
        v[j] = B64Value(c);
        if (v[j] < 0) return std::nullopt;
      }
    }
    uint32_t w = uint32_t(v[0]) << 18 | uint32_t(v[1]) << 12 | uint32_t(v[2]) << 6 | v[3];
    out.push_back(static_cast<uint8_t>(w >> 16));
    if (pad < 2) out.push_back(static_cast<uint8_t>(w >> 8));
    if (pad < 1) out.push_back(static_cast<uint8_t>(w));
  }
  return out;
}

}  // namespace haven
