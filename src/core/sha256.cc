#include <openssl/sha.h>

#include "core/id.h"

namespace haven {

RawId Sha256(ByteView data) {
  RawId id;
  SHA256(data.data(), data.size(), id.bytes.data());
  return id;
}

}  // namespace haven
