#include "crypto/kdf.h"

#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "core/error.h"
#include "core/huge_buffer.h"
#include "crypto/crypto_key.h"
#include "crypto/kdf_romix.h"

namespace haven::crypto {
namespace {

struct Vector {
  std::string password;
  std::string salt;
  ScryptParams params;
  std::string dk_hex;
};

// RFC 7914 §12 (the 1 GiB N=2^20 vector is left out to keep the suite light).
const Vector kRfcVectors[] = {
    {"",
     "",
     {16, 1, 1},
     "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
     "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"},
    {"password",
     "NaCl",
     {1024, 8, 16},
     "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
     "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"},
    {"pleaseletmein",
     "SodiumChloride",
     {16384, 8, 1},
     "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
     "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"},
};

TEST(ScryptTest, Rfc7914Vectors) {
  for (const Vector& v : kRfcVectors) {
    for (int threads : {1, 4}) {
      EXPECT_EQ(HexEncode(Scrypt(v.password, AsBytes(v.salt), v.params, 64, threads)), v.dk_hex)
          << v.password << " threads=" << threads;
    }
  }
}

// docs/format.md §3.
TEST(ScryptTest, FormatKnownAnswer) {
  Bytes salt(64);
  for (size_t i = 0; i < salt.size(); ++i) salt[i] = static_cast<uint8_t>(i);
  const std::string expected =
      "cc66e69192f15b74db1517365219cd3bbc9596c9d89742c0994c07731e4a8722"
      "5660816cdb814e9d9fb6d37480a6a772c7de7f285da1d924c3ea502395cf652a";
  for (int threads : {1, 4, 0}) {
    const Bytes dk = Scrypt("geheim", salt, {16384, 8, 1}, 64, threads);
    EXPECT_EQ(HexEncode(dk), expected);
    const CryptoKey k = CryptoKey::FromDerived(dk);
    EXPECT_EQ(HexEncode(k.mac_r), expected.substr(96));
  }
}

Bytes OpenSslScrypt(std::string_view pw, ByteView salt, const ScryptParams& p, size_t dk_len) {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "SCRYPT", nullptr);
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  uint64_t n = p.n;
  uint32_t r = p.r, par = p.p;
  OSSL_PARAM params[] = {OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD,
                                                           const_cast<char*>(pw.data()), pw.size()),
                         OSSL_PARAM_construct_octet_string(
                             OSSL_KDF_PARAM_SALT, const_cast<uint8_t*>(salt.data()), salt.size()),
                         OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
                         OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r),
                         OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &par),
                         OSSL_PARAM_construct_end()};
  Bytes out(dk_len);
  const int rc = EVP_KDF_derive(ctx, out.data(), out.size(), params);
  EVP_KDF_CTX_free(ctx);
  EVP_KDF_free(kdf);
  EXPECT_EQ(rc, 1);
  return out;
}

TEST(ScryptTest, MatchesOpenSsl) {
  const ScryptParams cases[] = {{2, 1, 1}, {4, 2, 3}, {128, 1, 1}, {256, 3, 5}, {1024, 8, 2}};
  Bytes salt(64);
  for (size_t i = 0; i < salt.size(); ++i) salt[i] = static_cast<uint8_t>(0xa5 ^ i);
  for (const ScryptParams& p : cases) {
    for (size_t dk_len : {1, 32, 64, 100}) {
      const Bytes expected = OpenSslScrypt("correct horse", salt, p, dk_len);
      EXPECT_EQ(Scrypt("correct horse", salt, p, dk_len, 1), expected) << p.n << "," << p.r;
      EXPECT_EQ(Scrypt("correct horse", salt, p, dk_len, 3), expected) << p.n << "," << p.r;
    }
  }
}

// A group implementation `fn` (lanes, up to max_lanes, computed together, each keeping 1/lanes
// of its V table and recomputing the rest) gives the portable ROMix's lanes, for single- and
// multi-block r and N from the smallest (one stored entry per lane) to one where j wraps often
// (and N not a multiple of a group of three: its last entries are recomputed from further
// back).
void ExpectGroupsMatchScalar(size_t max_lanes,
                             void (*fn)(uint8_t*, size_t, uint64_t, size_t, uint8_t*, uint8_t*)) {
  for (uint64_t n : {2, 4, 16, 1024}) {
    for (size_t r : {1, 2, 3, 8}) {
      for (size_t lanes = 1; lanes <= std::min<uint64_t>(max_lanes, n); ++lanes) {
        HugeBuffer v(n * 128 * r), scratch(detail::RoMixScratchBytes(r));
        Bytes scalar(128 * r * lanes), group(128 * r * lanes);
        for (size_t i = 0; i < scalar.size(); ++i)
          scalar[i] = group[i] = static_cast<uint8_t>(i * 131 + n + r);
        const Bytes input = scalar;
        for (size_t l = 0; l < lanes; ++l)
          detail::RoMixScalar(scalar.data() + l * 128 * r, n, r, v.data(), scratch.data());
        fn(group.data(), lanes, n, r, v.data(), scratch.data());
        EXPECT_NE(scalar, input) << "n=" << n << " r=" << r;
        EXPECT_EQ(HexEncode(group), HexEncode(scalar))
            << "n=" << n << " r=" << r << " lanes=" << lanes;
      }
    }
  }
}

// The SSE2 ROMix (the one Scrypt uses on x86-64 without AVX-512), alone and in pairs.
TEST(ScryptTest, RoMixGroupsMatchScalar) {
  if (!detail::kHaveRoMixSse2) GTEST_SKIP() << "this build has no SSE2 ROMix";
#if defined(__SSE2__)
  ExpectGroupsMatchScalar(detail::kRoMixMaxSse2Group, &detail::RoMixGroupSse2);
#endif
}

// The AVX-512 ROMix (chosen at run time where the CPU has it), in groups of one to four.
TEST(ScryptTest, RoMixAvx512GroupsMatchScalar) {
  if (!detail::RoMixAvx512Usable()) GTEST_SKIP() << "this CPU has no AVX-512F";
#if defined(__x86_64__)
  ExpectGroupsMatchScalar(detail::kRoMixMaxGroup, &detail::RoMixGroupAvx512);
#endif
}

void ExpectRejectedQuickly(const ScryptParams& p, std::string_view mentions) {
  const auto start = std::chrono::steady_clock::now();
  try {
    Scrypt("pw", AsBytes("salt"), p);
    ADD_FAILURE() << "accepted N=" << p.n << " r=" << p.r << " p=" << p.p;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
  }
  EXPECT_THROW(CheckScryptParams(p), Error);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(100)) << "N=" << p.n << " r=" << p.r;
}

TEST(ScryptTest, HostileParametersRejectedQuickly) {
  ExpectRejectedQuickly({uint64_t{1} << 31, 8, 1}, "N=");
  ExpectRejectedQuickly({uint64_t{1} << 63, 8, 1}, "N=");
  ExpectRejectedQuickly({16384, 1u << 15, 1u << 15}, "r*p");  // r*p = 2^30
  ExpectRejectedQuickly({16384, 0xffffffffu, 0xffffffffu}, "r*p");
  ExpectRejectedQuickly({1000, 8, 1}, "power of two");
  ExpectRejectedQuickly({1, 8, 1}, "N=1");
  ExpectRejectedQuickly({0, 8, 1}, "N=0");
  ExpectRejectedQuickly({16384, 0, 1}, "r=0");
  ExpectRejectedQuickly({16384, 8, 0}, "p=0");
  ExpectRejectedQuickly({16384, 8, 2000}, "p=2000");
  ExpectRejectedQuickly({1u << 20, 9, 1}, "memory");  // 1.125 GiB per lane
  ExpectRejectedQuickly({1u << 24, 8, 1}, "memory");  // 16 GiB per lane
  ExpectRejectedQuickly({2, 1u << 22, 4}, "buffer");  // 2 GiB B buffer
  ExpectRejectedQuickly({1u << 20, 8, 65}, "work");   // 65 GiB of work
}

TEST(ScryptTest, AcceptsRealisticParameters) {
  EXPECT_NO_THROW(CheckScryptParams({32768, 8, 6}));      // restic 0.14 calibration
  EXPECT_NO_THROW(CheckScryptParams({65536, 8, 1}));      // old restic default
  EXPECT_NO_THROW(CheckScryptParams({128, 1, 1}));        // restic test fixtures
  EXPECT_NO_THROW(CheckScryptParams({1u << 20, 8, 1}));   // exactly 1 GiB
  EXPECT_NO_THROW(CheckScryptParams({1u << 20, 8, 64}));  // exactly 64 GiB of work
}

TEST(ScryptTest, ThreadCountDoesNotChangeResult) {
  const ScryptParams p{512, 2, 7};
  const Bytes one = Scrypt("pw", AsBytes("salt"), p, 64, 1);
  for (int t : {2, 3, 7, 16, 0}) EXPECT_EQ(Scrypt("pw", AsBytes("salt"), p, 64, t), one) << t;
}

TEST(ScryptTest, BadDerivedLength) {
  EXPECT_THROW(Scrypt("pw", AsBytes("salt"), {16, 1, 1}, 0), Error);
}

}  // namespace
}  // namespace haven::crypto
