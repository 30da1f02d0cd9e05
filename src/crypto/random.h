// Cryptographically secure random bytes (OpenSSL's DRBG).
#pragma once

#include <cstddef>
#include <cstdint>

namespace haven::crypto {

// Throws haven::Error (kFatal) if the generator fails; never returns weak bytes.
void RandomBytes(uint8_t* out, size_t n);

}  // namespace haven::crypto
