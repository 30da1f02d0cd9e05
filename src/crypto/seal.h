// restic's authenticated encryption of one message (docs/format.md §2):
//   IV(16) || AES-256-CTR(encrypt, IV, P) || Poly1305-AES tag(16) over the ciphertext only.
// OpenSSL contexts are kept per thread and the key schedules are reused while the key is
// unchanged, so sealing many blobs with the master key costs no per-call set-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/bytes.h"
#include "crypto/crypto_key.h"

namespace haven::crypto {

inline constexpr size_t kIvSize = 16;
inline constexpr size_t kTagSize = 16;
inline constexpr size_t kOverhead = kIvSize + kTagSize;

// Uses a fresh random non-zero IV.
Bytes Seal(const CryptoKey& k, ByteView plaintext);
// out must hold plaintext.size() + kOverhead bytes and must not overlap plaintext, except
// that plaintext may start exactly at out + kIvSize: then it is sealed in place.
void SealInto(const CryptoKey& k, ByteView plaintext, uint8_t* out);
// Deterministic variant for known-answer tests. Throws haven::Error (kFatal) if iv16 is not
// 16 bytes or is all zero.
Bytes SealWithIv(const CryptoKey& k, ByteView iv16, ByteView plaintext);

// Checks the tag in constant time before decrypting anything. nullopt if sealed is shorter
// than kOverhead, has an all-zero IV, or fails authentication; the caller reports which object.
std::optional<Bytes> Open(const CryptoKey& k, ByteView sealed);
// out must hold sealed.size() - kOverhead bytes; it may be exactly sealed.data() + kIvSize
// (in-place) but must not otherwise overlap sealed. Returns false where Open returns nullopt;
// out is untouched then.
bool OpenInto(const CryptoKey& k, ByteView sealed, uint8_t* out);

// Plaintext size of a sealed message, or nullopt if it is too short to be one.
inline std::optional<size_t> PlaintextSize(size_t sealed_size) {
  if (sealed_size < kOverhead) return std::nullopt;
  return sealed_size - kOverhead;
}

}  // namespace haven::crypto
