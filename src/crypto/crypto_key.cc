#include "crypto/crypto_key.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "crypto/random.h"

namespace haven::crypto {
namespace {

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& a) {
  return std::all_of(a.begin(), a.end(), [](uint8_t b) { return b == 0; });
}

}  // namespace

bool CryptoKey::Valid() const { return !AllZero(encrypt) && !AllZero(mac_k) && !AllZero(mac_r); }

void ClampPoly1305R(std::array<uint8_t, 16>& r) {
  static constexpr uint8_t kMask[16] = {0xff, 0xff, 0xff, 0x0f, 0xfc, 0xff, 0xff, 0x0f,
                                        0xfc, 0xff, 0xff, 0x0f, 0xfc, 0xff, 0xff, 0x0f};
  for (size_t i = 0; i < 16; ++i) r[i] &= kMask[i];
}

CryptoKey CryptoKey::Random() {
  CryptoKey k;
  do {
    RandomBytes(k.encrypt.data(), k.encrypt.size());
    RandomBytes(k.mac_k.data(), k.mac_k.size());
    RandomBytes(k.mac_r.data(), k.mac_r.size());
    ClampPoly1305R(k.mac_r);
  } while (!k.Valid());
  return k;
}

CryptoKey CryptoKey::FromDerived(ByteView dk64) {
  if (dk64.size() != 64) {
    Fail(ErrorCode::kFatal,
         "crypto key derivation produced " + std::to_string(dk64.size()) + " bytes, need 64");
  }
  CryptoKey k;
  std::memcpy(k.encrypt.data(), dk64.data(), 32);
  std::memcpy(k.mac_k.data(), dk64.data() + 32, 16);
  std::memcpy(k.mac_r.data(), dk64.data() + 48, 16);
  return k;
}

}  // namespace haven::crypto
