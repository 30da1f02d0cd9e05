#include "chunker/polynomial.h"

#include <openssl/rand.h>

#include <bit>

#include "core/error.h"

namespace haven::chunker {

namespace {

void RequireNonZero(Polynomial m) {
  if (m == 0) Fail(ErrorCode::kInvalidArgument, "polynomial: division by zero");
}

}  // namespace

int Degree(Polynomial p) { return 63 - std::countl_zero(p); }

Polynomial Mul(Polynomial a, Polynomial b) {
  if (a == 0 || b == 0) return 0;
  if (Degree(a) + Degree(b) > 63)
    Fail(ErrorCode::kInvalidArgument, "polynomial: product exceeds degree 63");
  Polynomial r = 0;
  for (; b != 0; b &= b - 1) r ^= a << std::countr_zero(b);
  return r;
}

std::pair<Polynomial, Polynomial> DivMod(Polynomial a, Polynomial m) {
  RequireNonZero(m);
  const int dm = Degree(m);
  Polynomial q = 0;
  for (int da = Degree(a); da >= dm; da = Degree(a)) {
    q |= Polynomial{1} << (da - dm);
    a ^= m << (da - dm);
  }
  return {q, a};
}

Polynomial Mod(Polynomial a, Polynomial m) { return DivMod(a, m).second; }

Polynomial MulMod(Polynomial a, Polynomial b, Polynomial m) {
  RequireNonZero(m);
  const int dm = Degree(m);
  if (dm == 0) return 0;
  a = Mod(a, m);
  // Horner over b's bits, high to low; r and a stay below degree dm, so r << 1 fits 64 bits.
  Polynomial r = 0;
  for (int i = Degree(b); i >= 0; --i) {
    r <<= 1;
    if ((r >> dm) & 1) r ^= m;
    if ((b >> i) & 1) r ^= a;
  }
  return r;
}

Polynomial Gcd(Polynomial a, Polynomial b) {
  while (b != 0) {
    Polynomial r = Mod(a, b);
    a = b;
    b = r;
  }
  return a;
}

bool IsIrreducible(Polynomial p) {
  const int d = Degree(p);
  if (d < 1) return false;
  const Polynomial x = Mod(2, p);
  Polynomial h = x;  // x^(2^i) mod p
  for (int i = 1; i <= d / 2; ++i) {
    h = MulMod(h, h, p);
    if (Gcd(p, h ^ x) != 1) return false;
  }
  return true;
}

Polynomial RandomPolynomial() {
  constexpr int kMaxTries = 1000000;
  for (int i = 0; i < kMaxTries; ++i) {
    unsigned char raw[8];
    if (RAND_bytes(raw, sizeof(raw)) != 1)
      Fail(ErrorCode::kFatal, "chunker: random source failed while picking a polynomial");
    Polynomial p = 0;
    for (int k = 7; k >= 0; --k) p = p << 8 | raw[k];
    p &= (Polynomial{1} << 54) - 1;
    p |= Polynomial{1} << 53 | 1;
    if (IsIrreducible(p)) return p;
  }
  Fail(ErrorCode::kFatal, "chunker: no irreducible polynomial found in 1000000 draws");
}

}  // namespace haven::chunker
