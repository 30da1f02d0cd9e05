// scrypt (RFC 7914), used to derive the user key from a password (docs/format.md §3).
// The p lanes are independent and run on separate threads; ROMix is our own, PBKDF2-HMAC-SHA256
// is OpenSSL's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/bytes.h"

namespace haven::crypto {

struct ScryptParams {
  uint64_t n = 0;
  uint32_t r = 0;
  uint32_t p = 0;
  bool operator==(const ScryptParams&) const = default;
};

// Limits applied to parameters read from key files, so a hostile repository cannot make us
// allocate or compute without bound. restic's own choices (N=32768 r=8 p<=~20) are far below.
inline constexpr uint64_t kScryptMaxN = uint64_t{1} << 24;
inline constexpr uint32_t kScryptMaxP = 1024;
inline constexpr uint64_t kScryptMaxLaneMemory = uint64_t{1} << 30;  // 128*r*N bytes
inline constexpr uint64_t kScryptMaxWork = uint64_t{64} << 30;       // 128*r*N*p bytes

// Bytes of working memory one lane needs (128*r*N). Only meaningful for checked parameters.
inline uint64_t ScryptLaneMemory(const ScryptParams& p) { return 128 * uint64_t{p.r} * p.n; }

// Throws haven::Error (kCorrupt, message names the parameter) unless N > 1 is a power of two,
// r >= 1, p >= 1, r*p < 2^30 and the limits above hold. Does not allocate.
void CheckScryptParams(const ScryptParams& p);

// scrypt(password, salt, N, r, p, dk_len). Checks the parameters first (see above); dk_len must
// be in [1, 2^30]. Lanes run on up to `threads` threads (0 = hardware concurrency), further
// limited so that all lanes in flight together use at most max(1 GiB, one lane) of memory.
// Any thread count gives the same result.
Bytes Scrypt(std::string_view password, ByteView salt, const ScryptParams& p, size_t dk_len = 64,
             int threads = 0);

}  // namespace haven::crypto
