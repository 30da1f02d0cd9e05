// A restic crypto key (docs/format.md §2): AES-256 key for CTR mode plus the Poly1305-AES MAC key.
#pragma once

#include <array>
#include <cstdint>

#include "core/bytes.h"

namespace haven::crypto {

struct CryptoKey {
  std::array<uint8_t, 32> encrypt{};
  std::array<uint8_t, 16> mac_k{};  // AES-128 key producing the per-message Poly1305 pad s
  std::array<uint8_t, 16> mac_r{};  // Poly1305 r; clamped or not (clamped at use time)

  // restic's rule: none of encrypt, mac_k, mac_r may be all zero.
  bool Valid() const;

  // Fresh master key; mac_r is stored clamped (what restic <= 0.16 writes, accepted by all).
  static CryptoKey Random();
  // Splits a 64-byte KDF output: encrypt = dk[0:32], mac_k = dk[32:48], mac_r = dk[48:64].
  // Throws haven::Error (kFatal) if dk64 is not 64 bytes.
  static CryptoKey FromDerived(ByteView dk64);

  bool operator==(const CryptoKey&) const = default;
};

// Clears the Poly1305 bits of r that RFC 7539 requires to be zero.
void ClampPoly1305R(std::array<uint8_t, 16>& r);

}  // namespace haven::crypto
