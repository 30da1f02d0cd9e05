#include "chunker/polynomial.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/error.h"

namespace haven::chunker {
namespace {

using u128 = unsigned __int128;

// Independent reference: carry-less 64x64 -> 128 product and 128-bit remainder.
u128 ClMul(uint64_t a, uint64_t b) {
  u128 r = 0;
  for (int i = 0; i < 64; ++i)
    if ((b >> i) & 1) r ^= u128(a) << i;
  return r;
}

int Degree128(u128 v) {
  for (int i = 127; i >= 0; --i)
    if ((v >> i) & 1) return i;
  return -1;
}

uint64_t Mod128(u128 a, uint64_t m) {
  const int dm = Degree(m);
  for (int da = Degree128(a); da >= dm; da = Degree128(a)) a ^= u128(m) << (da - dm);
  return static_cast<uint64_t>(a);
}

// Brute force: p is irreducible iff no polynomial of degree 1 .. deg/2 divides it.
bool IrreducibleByTrialDivision(uint64_t p) {
  const int d = Degree(p);
  if (d < 1) return false;
  for (uint64_t q = 2; Degree(q) <= d / 2; ++q)
    if (Mod(p, q) == 0) return false;
  return true;
}

TEST(PolynomialTest, Degree) {
  EXPECT_EQ(Degree(0), -1);
  EXPECT_EQ(Degree(1), 0);
  EXPECT_EQ(Degree(2), 1);
  EXPECT_EQ(Degree(0xff), 7);
  EXPECT_EQ(Degree(0x3DA3358B4DC173), 53);
  EXPECT_EQ(Degree(uint64_t{1} << 63), 63);
}

TEST(PolynomialTest, MulSmallCases) {
  EXPECT_EQ(Mul(3, 3), 5u);  // (x+1)^2 = x^2+1
  EXPECT_EQ(Mul(7, 3), 9u);  // (x^2+x+1)(x+1) = x^3+1
  EXPECT_EQ(Mul(0, 0x1234), 0u);
  EXPECT_EQ(Mul(1, 0x1234), 0x1234u);
  EXPECT_EQ(Mul(2, 0x1234), 0x2468u);  // times x is a shift
  EXPECT_EQ(Mul(uint64_t{1} << 31, uint64_t{1} << 32), uint64_t{1} << 63);
  EXPECT_THROW(Mul(uint64_t{1} << 32, uint64_t{1} << 32), Error);
}

TEST(PolynomialTest, DivModInvertsMul) {
  std::mt19937_64 rng(1);
  for (int iter = 0; iter < 2000; ++iter) {
    const uint64_t a = rng();
    const uint64_t m = (rng() >> (rng() % 64)) | 1;
    const auto [q, r] = DivMod(a, m);
    EXPECT_LT(Degree(r), Degree(m));
    EXPECT_EQ(Mul(q, m) ^ r, a);
    EXPECT_EQ(Mod(a, m), r);
  }
  EXPECT_EQ(DivMod(0x1234, 0x1234), std::make_pair(uint64_t{1}, uint64_t{0}));
  EXPECT_EQ(DivMod(5, 3), std::make_pair(uint64_t{3}, uint64_t{0}));  // x^2+1 = (x+1)^2
  EXPECT_THROW(DivMod(5, 0), Error);
  EXPECT_THROW(Mod(5, 0), Error);
}

TEST(PolynomialTest, MulModMatchesWideReference) {
  std::mt19937_64 rng(2);
  const uint64_t p = 0x3DA3358B4DC173;
  for (int iter = 0; iter < 2000; ++iter) {
    const uint64_t a = rng(), b = rng();
    const uint64_t m = iter % 2 ? p : (rng() >> (rng() % 63)) | 2;
    EXPECT_EQ(MulMod(a, b, m), Mod128(ClMul(a, b), m)) << a << " " << b << " " << m;
  }
  EXPECT_EQ(MulMod(5, 7, 1), 0u);  // everything is 0 mod 1
  EXPECT_THROW(MulMod(5, 7, 0), Error);
  // x^53 mod p = p - x^53 (p is monic of degree 53).
  EXPECT_EQ(MulMod(uint64_t{1} << 27, uint64_t{1} << 26, p), p ^ (uint64_t{1} << 53));
}

TEST(PolynomialTest, Gcd) {
  EXPECT_EQ(Gcd(0, 0), 0u);
  EXPECT_EQ(Gcd(0x1234, 0), 0x1234u);
  EXPECT_EQ(Gcd(0, 0x1234), 0x1234u);
  EXPECT_EQ(Gcd(5, 3), 3u);  // gcd((x+1)^2, x+1)
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 500; ++iter) {
    const uint64_t c = (rng() >> 44) | 1;  // degree <= 19
    const uint64_t a = rng() >> 22, b = rng() >> 22;
    const uint64_t g = Gcd(Mul(a, c), Mul(b, c));
    EXPECT_EQ(Mod(g, c), 0u);
    EXPECT_EQ(Mod(Mul(a, c), g), 0u);
    EXPECT_EQ(Mod(Mul(b, c), g), 0u);
  }
}

TEST(PolynomialTest, IrreducibleVectors) {
  // docs/format.md §11.
  EXPECT_TRUE(IsIrreducible(0x3DA3358B4DC173));
  EXPECT_TRUE(IsIrreducible(0x2482734cacca49));
  EXPECT_FALSE(IsIrreducible(0x38f1e565e288df));
  // restic's repo polynomial from docs/format.md §11 (a real repository).
  EXPECT_TRUE(IsIrreducible(0x343fe6ff031a63));
  EXPECT_FALSE(IsIrreducible(0));
  EXPECT_FALSE(IsIrreducible(1));
  EXPECT_TRUE(IsIrreducible(2));                  // x
  EXPECT_TRUE(IsIrreducible(3));                  // x+1
  EXPECT_TRUE(IsIrreducible(7));                  // x^2+x+1
  EXPECT_FALSE(IsIrreducible(5));                 // (x+1)^2
  EXPECT_TRUE(IsIrreducible(0x11b));              // AES polynomial
  EXPECT_FALSE(IsIrreducible(0x3DA3358B4DC172));  // divisible by x
}

TEST(PolynomialTest, IrreducibleCountsPerDegree) {
  // Number of irreducible binary polynomials of degree 1..12 (OEIS A001037).
  const int expected[] = {2, 1, 2, 3, 6, 9, 18, 30, 56, 99, 186, 335};
  for (int d = 1; d <= 12; ++d) {
    int count = 0;
    for (uint64_t p = uint64_t{1} << d; p < uint64_t{2} << d; ++p) {
      const bool fast = IsIrreducible(p);
      if (d <= 10) {
        ASSERT_EQ(fast, IrreducibleByTrialDivision(p)) << std::hex << p;
      }
      count += fast;
    }
    EXPECT_EQ(count, expected[d - 1]) << "degree " << d;
  }
}

TEST(PolynomialTest, ProductsOfIrreduciblesAreReducible) {
  std::mt19937_64 rng(4);
  auto random_irreducible = [&](int degree) {
    for (;;) {
      const uint64_t p = (rng() & ((uint64_t{1} << degree) - 1)) | (uint64_t{1} << degree) | 1;
      if (IsIrreducible(p)) return p;
    }
  };
  for (int iter = 0; iter < 50; ++iter) {
    const int d1 = 1 + static_cast<int>(rng() % 26);
    const uint64_t p = Mul(random_irreducible(d1), random_irreducible(53 - d1));
    EXPECT_EQ(Degree(p), 53);
    EXPECT_FALSE(IsIrreducible(p)) << std::hex << p;
  }
  const uint64_t q = random_irreducible(26);
  EXPECT_FALSE(IsIrreducible(Mul(q, q)));
}

TEST(PolynomialTest, RandomPolynomialIsDegree53Irreducible) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 20; ++i) {
    const uint64_t p = RandomPolynomial();
    EXPECT_EQ(Degree(p), 53);
    EXPECT_EQ(p & 1, 1u);
    EXPECT_TRUE(IsIrreducible(p));
    seen.insert(p);
  }
  EXPECT_GT(seen.size(), 15u);  // 2^52 possibilities: repeats mean a broken random source
}

}  // namespace
}  // namespace haven::chunker
