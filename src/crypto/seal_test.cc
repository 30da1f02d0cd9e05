#include "crypto/seal.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "crypto/crypto_key.h"
#include "crypto/random.h"

namespace haven::crypto {
namespace {

Bytes Hex(std::string_view s) {
  std::string clean;
  for (char c : s)
    if (c != ' ') clean += c;
  auto b = HexDecode(clean);
  EXPECT_TRUE(b.has_value()) << s;
  return b.value_or(Bytes{});
}

CryptoKey VectorKey() {
  Bytes dk =
      Hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
          "202122232425262728292a2b2c2d2e2f"
          "303132333435363738393a3b3c3d3e3f");
  return CryptoKey::FromDerived(dk);
}

const Bytes kVectorIv = Hex("404142434445464748494a4b4c4d4e4f");

// docs/format.md §2.
TEST(SealTest, KnownAnswer) {
  const CryptoKey k = VectorKey();
  const Bytes expected =
      Hex("404142434445464748494a4b4c4d4e4f d11bac4bfe399a9bf60816e7fb3ed223df07"
          "8feac104b012b7d73df42db3bca7ee77");
  EXPECT_EQ(HexEncode(SealWithIv(k, kVectorIv, AsBytes("restic test vector"))),
            HexEncode(expected));
  auto opened = Open(k, expected);
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(AsChars(*opened), "restic test vector");
}

TEST(SealTest, KnownAnswerEmpty) {
  const CryptoKey k = VectorKey();
  const Bytes expected = Hex("404142434445464748494a4b4c4d4e4f 859469c07743c7e45b318d151d3d87e9");
  EXPECT_EQ(HexEncode(SealWithIv(k, kVectorIv, {})), HexEncode(expected));
  auto opened = Open(k, expected);
  ASSERT_TRUE(opened.has_value());
  EXPECT_TRUE(opened->empty());
}

TEST(SealTest, ClampedROrUnclampedRGiveSameTag) {
  CryptoKey k = VectorKey();
  const Bytes a = SealWithIv(k, kVectorIv, AsBytes("restic test vector"));
  ClampPoly1305R(k.mac_r);
  EXPECT_NE(k.mac_r, VectorKey().mac_r);
  EXPECT_EQ(SealWithIv(k, kVectorIv, AsBytes("restic test vector")), a);
}

TEST(SealTest, RoundTripManySizes) {
  const CryptoKey k = CryptoKey::Random();
  for (size_t n : {0, 1, 15, 16, 17, 63, 64, 65, 1000, 4096, 65537, 1 << 20}) {
    Bytes p(n);
    RandomBytes(p.data(), p.size());
    const Bytes s = Seal(k, p);
    ASSERT_EQ(s.size(), n + kOverhead);
    auto o = Open(k, s);
    ASSERT_TRUE(o.has_value()) << n;
    EXPECT_EQ(*o, p) << n;
  }
}

TEST(SealTest, IntoVariantsAndInPlaceOpen) {
  const CryptoKey k = CryptoKey::Random();
  Bytes p(1000);
  RandomBytes(p.data(), p.size());
  Bytes s(p.size() + kOverhead);
  SealInto(k, p, s.data());
  Bytes out(p.size());
  ASSERT_TRUE(OpenInto(k, s, out.data()));
  EXPECT_EQ(out, p);
  ASSERT_TRUE(OpenInto(k, s, s.data() + kIvSize));  // in place
  EXPECT_TRUE(std::equal(p.begin(), p.end(), s.begin() + kIvSize));
}

TEST(SealTest, SealIntoInPlaceRoundTrips) {
  // WriteSession compresses a blob to buf + kIvSize and seals it there: sizes around the
  // encrypt-and-MAC slice (16 KiB) and across several slices.
  const CryptoKey k = CryptoKey::Random();
  for (size_t n : {0, 1, 16383, 16384, 16385, 100000, 1 << 20}) {
    Bytes p(n);
    RandomBytes(p.data(), p.size());
    Bytes buf(n + kOverhead);
    std::copy(p.begin(), p.end(), buf.begin() + kIvSize);
    SealInto(k, ByteView(buf.data() + kIvSize, n), buf.data());
    auto o = Open(k, buf);
    ASSERT_TRUE(o.has_value()) << n;
    EXPECT_EQ(*o, p) << n;
    if (n >= 16) {
      EXPECT_FALSE(std::equal(p.begin(), p.end(), buf.begin() + kIvSize)) << n;
    }
  }
}

TEST(SealTest, FreshIvEachTime) {
  const CryptoKey k = CryptoKey::Random();
  const Bytes a = Seal(k, AsBytes("same"));
  const Bytes b = Seal(k, AsBytes("same"));
  EXPECT_NE(a, b);
  EXPECT_NE(Bytes(a.begin(), a.begin() + 16), Bytes(16, 0));
}

TEST(SealTest, TamperAnyByteFails) {
  const CryptoKey k = CryptoKey::Random();
  const Bytes s = Seal(k, AsBytes("some plaintext of moderate length"));
  for (size_t i = 0; i < s.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80}) {
      Bytes t = s;
      t[i] ^= flip;
      EXPECT_FALSE(Open(k, t).has_value()) << "byte " << i;
    }
  }
  // Truncation and extension too.
  EXPECT_FALSE(Open(k, ByteView(s).first(s.size() - 1)).has_value());
  Bytes longer = s;
  longer.push_back(0);
  EXPECT_FALSE(Open(k, longer).has_value());
}

TEST(SealTest, IvsAreDistinct) {
  const CryptoKey k = CryptoKey::Random();
  std::vector<Bytes> ivs;
  for (int i = 0; i < 1000; ++i) {
    const Bytes s = Seal(k, {});
    ivs.emplace_back(s.begin(), s.begin() + kIvSize);
  }
  std::sort(ivs.begin(), ivs.end());
  EXPECT_EQ(std::adjacent_find(ivs.begin(), ivs.end()), ivs.end());
}

TEST(SealTest, ForkedChildDoesNotRepeatParentIvs) {
  const CryptoKey k = CryptoKey::Random();
  (void)Seal(k, {});  // fill this thread's IV pool
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const Bytes s = Seal(k, {});
    _exit(write(fds[1], s.data(), kIvSize) == static_cast<ssize_t>(kIvSize) ? 0 : 1);
  }
  const Bytes parent = Seal(k, {});
  uint8_t child_iv[kIvSize];
  ASSERT_EQ(read(fds[0], child_iv, kIvSize), static_cast<ssize_t>(kIvSize));
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  close(fds[1]);
  EXPECT_FALSE(std::equal(parent.begin(), parent.begin() + kIvSize, child_iv));
}

TEST(SealTest, WrongKeyFails) {
  const CryptoKey k = CryptoKey::Random();
  const Bytes s = Seal(k, AsBytes("secret"));
  CryptoKey other = k;
  other.encrypt[0] ^= 1;  // MAC still verifies: only the MAC key authenticates
  EXPECT_TRUE(Open(other, s).has_value());
  other = k;
  other.mac_k[0] ^= 1;
  EXPECT_FALSE(Open(other, s).has_value());
  other = k;
  other.mac_r[1] ^= 1;
  EXPECT_FALSE(Open(other, s).has_value());
}

TEST(SealTest, KeyCacheFollowsKeyChanges) {
  // Alternating keys on one thread must not reuse a stale key schedule.
  const CryptoKey a = CryptoKey::Random();
  const CryptoKey b = CryptoKey::Random();
  const Bytes sa = Seal(a, AsBytes("alpha"));
  const Bytes sb = Seal(b, AsBytes("bravo"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(AsChars(Open(a, sa).value()), "alpha");
    EXPECT_FALSE(Open(b, sa).has_value());
    EXPECT_EQ(AsChars(Open(b, sb).value()), "bravo");
    EXPECT_FALSE(Open(a, sb).has_value());
  }
  EXPECT_EQ(Seal(VectorKey(), {}).size(), kOverhead);
  EXPECT_EQ(HexEncode(SealWithIv(VectorKey(), kVectorIv, {})),
            "404142434445464748494a4b4c4d4e4f859469c07743c7e45b318d151d3d87e9");
}

TEST(SealTest, ConcurrentThreads) {
  const CryptoKey a = CryptoKey::Random();
  const CryptoKey b = CryptoKey::Random();
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const CryptoKey& k = (t % 2) ? a : b;
      Bytes p(3000 + t);
      RandomBytes(p.data(), p.size());
      for (int i = 0; i < 200; ++i) {
        auto o = Open(k, Seal(k, p));
        if (!o || *o != p) ++failures[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(8, 0));
}

TEST(SealTest, ZeroIvRejected) {
  const CryptoKey k = VectorKey();
  // A correctly tagged message under an all-zero IV must still be refused.
  Bytes s = SealWithIv(k, kVectorIv, AsBytes("x"));
  std::fill(s.begin(), s.begin() + 16, 0);
  EXPECT_FALSE(Open(k, s).has_value());
  Bytes zero(40, 0);
  EXPECT_FALSE(Open(k, zero).has_value());
  EXPECT_THROW(SealWithIv(k, Bytes(16, 0), AsBytes("x")), Error);
  EXPECT_THROW(SealWithIv(k, Bytes(15, 1), AsBytes("x")), Error);
}

TEST(SealTest, TooShortRejected) {
  const CryptoKey k = CryptoKey::Random();
  for (size_t n = 0; n < kOverhead; ++n) {
    Bytes s(n, 0x41);
    EXPECT_FALSE(Open(k, s).has_value()) << n;
    uint8_t out[1];
    EXPECT_FALSE(OpenInto(k, s, out)) << n;
  }
  EXPECT_FALSE(PlaintextSize(31).has_value());
  EXPECT_EQ(PlaintextSize(32), 0u);
}

TEST(CryptoKeyTest, Valid) {
  CryptoKey k = CryptoKey::Random();
  EXPECT_TRUE(k.Valid());
  // Random keys store a clamped r.
  CryptoKey clamped = k;
  ClampPoly1305R(clamped.mac_r);
  EXPECT_EQ(clamped.mac_r, k.mac_r);
  for (int part = 0; part < 3; ++part) {
    CryptoKey z = k;
    if (part == 0) z.encrypt.fill(0);
    if (part == 1) z.mac_k.fill(0);
    if (part == 2) z.mac_r.fill(0);
    EXPECT_FALSE(z.Valid()) << part;
  }
  EXPECT_FALSE(CryptoKey{}.Valid());
  EXPECT_THROW(CryptoKey::FromDerived(Bytes(63)), Error);
}

TEST(CryptoKeyTest, FromDerivedSplits) {
  const CryptoKey k = VectorKey();
  EXPECT_EQ(k.encrypt[0], 0x00);
  EXPECT_EQ(k.encrypt[31], 0x1f);
  EXPECT_EQ(k.mac_k[0], 0x20);
  EXPECT_EQ(k.mac_k[15], 0x2f);
  EXPECT_EQ(k.mac_r[0], 0x30);
  EXPECT_EQ(k.mac_r[15], 0x3f);
}

}  // namespace
}  // namespace haven::crypto
