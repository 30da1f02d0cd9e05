#include "crypto/random.h"

#include <openssl/rand.h>

#include <algorithm>
#include <climits>

#include "core/error.h"

namespace haven::crypto {

void RandomBytes(uint8_t* out, size_t n) {
  while (n > 0) {
    const size_t chunk = std::min<size_t>(n, INT_MAX);
    if (RAND_bytes(out, static_cast<int>(chunk)) != 1) {
      Fail(ErrorCode::kFatal, "random number generator failed (RAND_bytes)");
    }
    out += chunk;
    n -= chunk;
  }
}

}  // namespace haven::crypto
