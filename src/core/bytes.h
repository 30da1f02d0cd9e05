// Byte buffers and the encodings used by the repository format: lowercase hex and
// standard padded base64 (Go's []byte JSON encoding).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace haven {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

inline ByteView AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string_view AsChars(ByteView b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

std::string HexEncode(ByteView data);
// The same digits appended to `out` (no string per call: index and tree encoders).
void AppendHex(std::string& out, ByteView data);
// Accepts upper and lower case; nullopt on odd length or a non-hex character.
// Decodes exactly 2*n hex digits into out[0..n) without allocating; false on a non-hex digit.
bool HexDecodeInto(std::string_view hex, uint8_t* out, size_t n);
std::optional<Bytes> HexDecode(std::string_view hex);

std::string Base64Encode(ByteView data);
// Standard alphabet with padding (as Go writes); nullopt on malformed input.
std::optional<Bytes> Base64Decode(std::string_view text);

inline void PutU32Le(Bytes& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline uint32_t GetU32Le(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace haven
