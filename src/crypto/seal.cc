#include "crypto/seal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "crypto/random.h"

namespace haven::crypto {
namespace {

[[noreturn]] void OpenSslFail(const char* what) {
  Fail(ErrorCode::kFatal, std::string("OpenSSL failure in ") + what);
}

bool IsZeroIv(const uint8_t* iv) {
  uint8_t acc = 0;
  for (size_t i = 0; i < kIvSize; ++i) acc |= iv[i];
  return acc == 0;
}

EVP_MAC* Poly1305Mac() {
  struct MacFree {
    void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
  };
  static const std::unique_ptr<EVP_MAC, MacFree> mac(EVP_MAC_fetch(nullptr, "POLY1305", nullptr));
  if (!mac) OpenSslFail("EVP_MAC_fetch(POLY1305)");
  return mac.get();
}

// Per-thread OpenSSL state. The AES key schedules are kept while the same key is used again
// (the usual case: every blob is sealed with the master key); only the IV changes per call.
class ThreadState {
 public:
  ThreadState() {
    ctr_ = EVP_CIPHER_CTX_new();
    ecb_ = EVP_CIPHER_CTX_new();
    mac_ = EVP_MAC_CTX_new(Poly1305Mac());
    if (!ctr_ || !ecb_ || !mac_) OpenSslFail("context allocation");
    if (EVP_EncryptInit_ex(ctr_, EVP_aes_256_ctr(), nullptr, nullptr, nullptr) != 1 ||
        EVP_EncryptInit_ex(ecb_, EVP_aes_128_ecb(), nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_set_padding(ecb_, 0) != 1) {
      OpenSslFail("cipher initialisation");
    }
  }
  ~ThreadState() {
    EVP_CIPHER_CTX_free(ctr_);
    EVP_CIPHER_CTX_free(ecb_);
    EVP_MAC_CTX_free(mac_);
    OPENSSL_cleanse(ctr_key_.data(), ctr_key_.size());
    OPENSSL_cleanse(ecb_key_.data(), ecb_key_.size());
  }
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;

  // AES-256-CTR with the counter block starting at iv; then CtrApply any number of times.
  void CtrStart(const std::array<uint8_t, 32>& key, const uint8_t* iv) {
    const bool same_key = ctr_keyed_ && CRYPTO_memcmp(key.data(), ctr_key_.data(), 32) == 0;
    if (EVP_EncryptInit_ex(ctr_, nullptr, nullptr, same_key ? nullptr : key.data(), iv) != 1) {
      OpenSslFail("AES-256-CTR init");
    }
    if (!same_key) {
      ctr_key_ = key;
      ctr_keyed_ = true;
    }
  }
  void CtrApply(const uint8_t* in, size_t n, uint8_t* out) {
    while (n > 0) {
      const size_t chunk = std::min<size_t>(n, size_t{1} << 30);
      int outl = 0;
      if (EVP_EncryptUpdate(ctr_, out, &outl, in, static_cast<int>(chunk)) != 1 ||
          static_cast<size_t>(outl) != chunk) {
        OpenSslFail("AES-256-CTR");
      }
      in += chunk;
      out += chunk;
      n -= chunk;
    }
  }

  // Poly1305-AES: one-time key r = key.mac_r (OpenSSL clamps it), s = AES-128(mac_k, iv).
  void MacStart(const CryptoKey& key, const uint8_t* iv) {
    uint8_t otk[32];
    std::memcpy(otk, key.mac_r.data(), 16);
    const bool same_key = ecb_keyed_ && CRYPTO_memcmp(key.mac_k.data(), ecb_key_.data(), 16) == 0;
    if (!same_key) {
      if (EVP_EncryptInit_ex(ecb_, nullptr, nullptr, key.mac_k.data(), nullptr) != 1) {
        OpenSslFail("AES-128 init");
      }
      ecb_key_ = key.mac_k;
      ecb_keyed_ = true;
    }
    int outl = 0;
    const bool ok = EVP_EncryptUpdate(ecb_, otk + 16, &outl, iv, 16) == 1 && outl == 16 &&
                    EVP_MAC_init(mac_, otk, sizeof otk, nullptr) == 1;
    OPENSSL_cleanse(otk, sizeof otk);
    if (!ok) OpenSslFail("Poly1305 init");
  }
  void MacUpdate(const uint8_t* msg, size_t n) {
    if (n > 0 && EVP_MAC_update(mac_, msg, n) != 1) OpenSslFail("Poly1305");
  }
  void MacFinish(uint8_t tag[kTagSize]) {
    size_t tag_len = 0;
    if (EVP_MAC_final(mac_, tag, &tag_len, kTagSize) != 1 || tag_len != kTagSize) {
      OpenSslFail("Poly1305 final");
    }
  }

 private:
  EVP_CIPHER_CTX* ctr_ = nullptr;
  EVP_CIPHER_CTX* ecb_ = nullptr;
  EVP_MAC_CTX* mac_ = nullptr;
  std::array<uint8_t, 32> ctr_key_{};
  std::array<uint8_t, 16> ecb_key_{};
  bool ctr_keyed_ = false;
  bool ecb_keyed_ = false;
};

ThreadState& State() {
  thread_local ThreadState state;
  return state;
}

// IVs come from a per-thread pool of CSPRNG output: RAND_bytes costs about 2 us per call
// whatever the size, more than sealing a small blob. IVs need only be unique, not secret.
// A forked child discards the pool it inherited so parent and child never share an IV.
std::atomic<uint64_t> g_fork_generation{0};

void OnForkChild() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

struct IvPool {
  uint8_t bytes[32 * kIvSize];
  size_t used = sizeof bytes;
  uint64_t generation = 0;
};

void NextIv(uint8_t iv[kIvSize]) {
  static const bool fork_safe = pthread_atfork(nullptr, nullptr, OnForkChild) == 0;
  thread_local IvPool pool;
  const uint64_t generation = g_fork_generation.load(std::memory_order_relaxed);
  do {
    if (!fork_safe) {
      RandomBytes(iv, kIvSize);
      continue;
    }
    if (pool.used == sizeof pool.bytes || pool.generation != generation) {
      RandomBytes(pool.bytes, sizeof pool.bytes);
      pool.used = 0;
      pool.generation = generation;
    }
    std::memcpy(iv, pool.bytes + pool.used, kIvSize);
    pool.used += kIvSize;
  } while (IsZeroIv(iv));
}

void SealWithIvInto(const CryptoKey& k, const uint8_t* iv, ByteView plaintext, uint8_t* out) {
  ThreadState& st = State();
  std::memcpy(out, iv, kIvSize);
  st.CtrStart(k.encrypt, iv);
  st.MacStart(k, iv);
  // Encrypt and authenticate in slices so the MAC reads ciphertext that is still in L1/L2.
  constexpr size_t kSlice = 16 * 1024;
  const uint8_t* in = plaintext.data();
  uint8_t* ct = out + kIvSize;
  for (size_t left = plaintext.size(); left > 0;) {
    const size_t n = std::min(left, kSlice);
    st.CtrApply(in, n, ct);
    st.MacUpdate(ct, n);
    in += n;
    ct += n;
    left -= n;
  }
  st.MacFinish(ct);
}

}  // namespace

void SealInto(const CryptoKey& k, ByteView plaintext, uint8_t* out) {
  uint8_t iv[kIvSize];
  NextIv(iv);
  SealWithIvInto(k, iv, plaintext, out);
}

Bytes Seal(const CryptoKey& k, ByteView plaintext) {
  Bytes out(plaintext.size() + kOverhead);
  SealInto(k, plaintext, out.data());
  return out;
}

Bytes SealWithIv(const CryptoKey& k, ByteView iv16, ByteView plaintext) {
  if (iv16.size() != kIvSize || IsZeroIv(iv16.data())) {
    Fail(ErrorCode::kFatal, "SealWithIv: IV must be 16 bytes and not all zero");
  }
  Bytes out(plaintext.size() + kOverhead);
  SealWithIvInto(k, iv16.data(), plaintext, out.data());
  return out;
}

bool OpenInto(const CryptoKey& k, ByteView sealed, uint8_t* out) {
  if (sealed.size() < kOverhead) return false;
  const uint8_t* iv = sealed.data();
  if (IsZeroIv(iv)) return false;
  const size_t n = sealed.size() - kOverhead;
  const uint8_t* ct = iv + kIvSize;
  ThreadState& st = State();
  uint8_t tag[kTagSize];
  st.MacStart(k, iv);
  st.MacUpdate(ct, n);
  st.MacFinish(tag);
  if (CRYPTO_memcmp(tag, ct + n, kTagSize) != 0) return false;
  st.CtrStart(k.encrypt, iv);
  st.CtrApply(ct, n, out);
  return true;
}

std::optional<Bytes> Open(const CryptoKey& k, ByteView sealed) {
  if (sealed.size() < kOverhead) return std::nullopt;
  Bytes out(sealed.size() - kOverhead);
  if (!OpenInto(k, sealed, out.data())) return std::nullopt;
  return out;
}

}  // namespace haven::crypto
