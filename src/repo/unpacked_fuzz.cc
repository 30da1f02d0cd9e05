// Fuzz target: the layers under every unpacked file and blob: crypto::Open and zstd
// decompression with bounds (Repository::DecodeUnpacked / DecodeBlob do the same steps).
// The first byte selects the mode:
//   0: rest is a sealed message; Open it with the fixed key (rejects almost everything);
//   1: rest is the plaintext of a v2 unpacked file: 0x02 + zstd frame, or raw JSON;
//   2: bytes 1..4 = expected uncompressed length (LE), rest = zstd frame of a blob;
//   3: rest is sealed with the fixed key and a fixed IV, opened (must round-trip) and then
//      treated as in mode 1.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/fuzz_check.h"
#include "core/error.h"
#include "crypto/crypto_key.h"
#include "crypto/seal.h"
#include "repo/compress.h"

namespace {

using namespace haven;


constexpr size_t kMaxOut = size_t{1} << 20;  // the fuzz stand-in for the 4 GiB limit

const crypto::CryptoKey& FixedKey() {
  static const crypto::CryptoKey key = [] {
    Bytes dk(64);
    for (size_t i = 0; i < dk.size(); ++i) dk[i] = static_cast<uint8_t>(i);
    return crypto::CryptoKey::FromDerived(dk);
  }();
  return key;
}

// Repository::DecodeUnpacked's steps after Open, for a v2 repository.
void DecodePayload(ByteView plain) {
  if (plain.empty()) return;
  const uint8_t b = plain[0];
  if (b == 2) {
    Bytes out = ZstdDecompress(plain.subspan(1), 0, kMaxOut, "fuzz");
    FUZZ_CHECK(out.size() <= kMaxOut);
    return;
  }
  if (b != '{' && b != '[') Fail(ErrorCode::kCorrupt, "unsupported encoding format");
}

void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const ByteView rest(data + 1, size - 1);
  switch (data[0] & 3) {
    case 0: {
      auto plain = crypto::Open(FixedKey(), rest);
      if (plain) {
        FUZZ_CHECK(plain->size() + crypto::kOverhead == rest.size());
        DecodePayload(*plain);
      }
      break;
    }
    case 1:
      DecodePayload(rest);
      break;
    case 2: {
      if (rest.size() < 4) return;
      const uint32_t expected = GetU32Le(rest.data()) % (kMaxOut + 1);
      const ByteView frame = rest.subspan(4);
      if (expected == 0) {
        Bytes out = ZstdDecompress(frame, 0, kMaxOut, "fuzz");
        FUZZ_CHECK(out.size() <= kMaxOut);
      } else {
        Bytes out = ZstdDecompress(frame, expected, expected, "fuzz");
        FUZZ_CHECK(out.size() == expected);
      }
      break;
    }
    default: {
      static const Bytes iv(16, 0x42);
      Bytes sealed = crypto::SealWithIv(FixedKey(), iv, rest);
      FUZZ_CHECK(sealed.size() == rest.size() + crypto::kOverhead);
      auto plain = crypto::Open(FixedKey(), sealed);
      FUZZ_CHECK(plain.has_value());
      FUZZ_CHECK(Bytes(rest.begin(), rest.end()) == *plain);
      // Any single flipped bit is detected.
      sealed[sealed.size() / 2] ^= 1;
      FUZZ_CHECK(!crypto::Open(FixedKey(), sealed).has_value());
      DecodePayload(*plain);
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    Run(data, size);
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
  }
  return 0;
}
