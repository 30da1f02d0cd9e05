// Polynomials over GF(2) packed into a uint64_t (bit k = coefficient of x^k; addition is XOR),
// as used for the repository's chunker polynomial (docs/format.md §11).
#pragma once

#include <cstdint>
#include <utility>

namespace haven::chunker {

using Polynomial = uint64_t;

// Degree of p; -1 for the zero polynomial.
int Degree(Polynomial p);

// Product a·b. Requires Degree(a) + Degree(b) <= 63; throws Error(kInvalidArgument) otherwise.
Polynomial Mul(Polynomial a, Polynomial b);

// Quotient and remainder of a / m. Requires m != 0 (throws Error(kInvalidArgument)).
std::pair<Polynomial, Polynomial> DivMod(Polynomial a, Polynomial m);

// a mod m. Requires m != 0 (throws Error(kInvalidArgument)).
Polynomial Mod(Polynomial a, Polynomial m);

// a·b mod m, without overflow for any a, b. Requires m != 0 (throws Error(kInvalidArgument)).
Polynomial MulMod(Polynomial a, Polynomial b, Polynomial m);

// Greatest common divisor (monic, as every nonzero GF(2) polynomial is); Gcd(0, 0) == 0.
Polynomial Gcd(Polynomial a, Polynomial b);

// Ben-Or test: p is irreducible iff gcd(p, x^(2^i) - x mod p) == 1 for i = 1 .. deg(p)/2.
// Polynomials of degree < 1 are not irreducible.
bool IsIrreducible(Polynomial p);

// A fresh repository polynomial as restic picks it: 8 random bytes (OpenSSL RAND_bytes) read
// little-endian, low 54 bits kept, bits 53 and 0 set, retried until irreducible. Always degree
// 53. Throws Error(kFatal) if the random source fails or 10^6 draws are all reducible.
Polynomial RandomPolynomial();

}  // namespace haven::chunker
