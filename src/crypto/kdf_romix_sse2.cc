// The SSE2 ROMix for a group of lanes (crypto/kdf_romix.h). A 64-byte block is four vectors
// holding its words in the diagonal order
//   A = (x0, x5, x10, x15)  B = (x4, x9, x14, x3)  C = (x8, x13, x2, x7)  D = (x12, x1, x6, x11)
// in which Salsa20's column round is B ^= (A+D)<<<7, C ^= (B+A)<<<9, D ^= (C+B)<<<13,
// A ^= (D+C)<<<18 on whole vectors, and its row round the same steps once B, C and D are
// rotated by three, two and one words. V and the scratch buffers keep every block in this
// order (XOR and copy do not care about the order of words); it is changed only on the way in
// and out. Integerify's word x0 of the last block stays in the block's first four bytes.
//
// K lanes run in lock step, each step of Salsa20/8 done for every lane before the next, so the
// K dependency chains overlap. Lane k keeps V entries 0, K, 2K, ... (cap = n/K of them) in
// its own part of v; entry j is recomputed from the stored entry at slot min(j/K, cap-1) with
// d = j - K*slot BlockMix steps. In lock step every lane runs max(d) steps; a lane that needs
// fewer sends the extra outputs to a scratch block that nothing reads.
#include "crypto/kdf_romix.h"

#if defined(__SSE2__)

#include <emmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace haven::crypto::detail {
namespace {

#define HAVEN_INLINE inline __attribute__((always_inline))

// A block in registers.
struct Quad {
  __m128i a, b, c, d;
};

// x ^ (t <<< k).
template <int k>
HAVEN_INLINE __m128i XorRotl(__m128i x, __m128i t) {
  return _mm_xor_si128(_mm_xor_si128(x, _mm_slli_epi32(t, k)), _mm_srli_epi32(t, 32 - k));
}

// s[l] += Salsa20/8 rounds of s[l] for each of the K lanes, step by step across the lanes.
// The shuffles are off the critical path: each rotates a vector the next steps read later.
template <size_t K>
HAVEN_INLINE void Salsa8(Quad (&s)[K]) {
  Quad x[K];
  for (size_t l = 0; l < K; ++l) x[l] = s[l];
  for (int i = 0; i < 4; ++i) {
    for (size_t l = 0; l < K; ++l) x[l].b = XorRotl<7>(x[l].b, _mm_add_epi32(x[l].a, x[l].d));
    for (size_t l = 0; l < K; ++l) x[l].c = XorRotl<9>(x[l].c, _mm_add_epi32(x[l].b, x[l].a));
    for (size_t l = 0; l < K; ++l) x[l].d = XorRotl<13>(x[l].d, _mm_add_epi32(x[l].c, x[l].b));
    for (size_t l = 0; l < K; ++l) x[l].a = XorRotl<18>(x[l].a, _mm_add_epi32(x[l].d, x[l].c));
    for (size_t l = 0; l < K; ++l) {
      x[l].b = _mm_shuffle_epi32(x[l].b, 0x93);  // (x3, x4, x9, x14)
      x[l].c = _mm_shuffle_epi32(x[l].c, 0x4e);  // (x2, x7, x8, x13)
      x[l].d = _mm_shuffle_epi32(x[l].d, 0x39);  // (x1, x6, x11, x12)
    }
    for (size_t l = 0; l < K; ++l) x[l].d = XorRotl<7>(x[l].d, _mm_add_epi32(x[l].a, x[l].b));
    for (size_t l = 0; l < K; ++l) x[l].c = XorRotl<9>(x[l].c, _mm_add_epi32(x[l].d, x[l].a));
    for (size_t l = 0; l < K; ++l) x[l].b = XorRotl<13>(x[l].b, _mm_add_epi32(x[l].c, x[l].d));
    for (size_t l = 0; l < K; ++l) x[l].a = XorRotl<18>(x[l].a, _mm_add_epi32(x[l].b, x[l].c));
    for (size_t l = 0; l < K; ++l) {
      x[l].b = _mm_shuffle_epi32(x[l].b, 0x39);  // back to diagonal order
      x[l].c = _mm_shuffle_epi32(x[l].c, 0x4e);
      x[l].d = _mm_shuffle_epi32(x[l].d, 0x93);
    }
  }
  for (size_t l = 0; l < K; ++l) {
    s[l].a = _mm_add_epi32(s[l].a, x[l].a);
    s[l].b = _mm_add_epi32(s[l].b, x[l].b);
    s[l].c = _mm_add_epi32(s[l].c, x[l].c);
    s[l].d = _mm_add_epi32(s[l].d, x[l].d);
  }
}

HAVEN_INLINE void Xor(Quad& s, const __m128i* p) {
  s.a = _mm_xor_si128(s.a, _mm_load_si128(p));
  s.b = _mm_xor_si128(s.b, _mm_load_si128(p + 1));
  s.c = _mm_xor_si128(s.c, _mm_load_si128(p + 2));
  s.d = _mm_xor_si128(s.d, _mm_load_si128(p + 3));
}
HAVEN_INLINE void Store(__m128i* p, const Quad& s) {
  _mm_store_si128(p, s.a);
  _mm_store_si128(p + 1, s.b);
  _mm_store_si128(p + 2, s.c);
  _mm_store_si128(p + 3, s.d);
}

// Per lane: out = BlockMix(in), or BlockMix(in ^ in2) when kXor; 2r blocks of four vectors
// each. Block 2i goes to out block i, block 2i+1 to out block r+i (RFC 7914 §4).
template <size_t K, bool kXor>
HAVEN_INLINE void BlockMix(const __m128i* const (&in)[K], const __m128i* const (&in2)[K],
                           __m128i* const (&out)[K], size_t r) {
  const size_t last = 4 * (2 * r - 1);
  Quad x[K];
  for (size_t l = 0; l < K; ++l) {
    x[l] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
    Xor(x[l], in[l] + last);
    if constexpr (kXor) Xor(x[l], in2[l] + last);
  }
  for (size_t i = 0; i < r; ++i) {
    for (size_t half = 0; half < 2; ++half) {
      for (size_t l = 0; l < K; ++l) {
        Xor(x[l], in[l] + 8 * i + 4 * half);
        if constexpr (kXor) Xor(x[l], in2[l] + 8 * i + 4 * half);
      }
      Salsa8(x);
      for (size_t l = 0; l < K; ++l) Store(out[l] + 4 * (half * r + i), x[l]);
    }
  }
}

template <size_t K>
void RoMixGroup(uint8_t* b, uint64_t n, size_t r, __m128i* v, __m128i* scratch) {
  const size_t blocks = 2 * r;
  const size_t lane = 4 * blocks;  // vectors per 128*r bytes
  const uint64_t cap = n / K;      // V entries each lane keeps (n >= K)
  // Per lane: its V slots, X and Y (the running block), T0 and T1 (recomputed V entries),
  // and a block whose contents nothing reads.
  __m128i *slots[K], *x[K], *y[K], *t0[K], *t1[K], *sink[K];
  for (size_t l = 0; l < K; ++l) {
    slots[l] = v + l * cap * lane;
    __m128i* s = scratch + 5 * l * lane;
    x[l] = s, y[l] = s + lane, t0[l] = s + 2 * lane, t1[l] = s + 3 * lane, sink[l] = s + 4 * lane;
  }
  // First loop: X = BlockMix^n(B); V entry i (stored when i is a multiple of K below K*cap)
  // is the value before the i-th step. cur points at the entry being stepped from.
  const __m128i* cur[K];
  for (size_t l = 0; l < K; ++l) {
    ToDiagonalOrder(b + l * 128 * r, blocks, slots[l]);
    cur[l] = slots[l];
  }
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t next = i + 1;
    const bool keep = next % K == 0 && next / K < cap;
    __m128i* out[K];
    for (size_t l = 0; l < K; ++l)
      out[l] = keep ? slots[l] + (next / K) * lane : (cur[l] == x[l] ? y[l] : x[l]);
    BlockMix<K, false>(cur, cur, out, r);
    for (size_t l = 0; l < K; ++l) cur[l] = out[l];
  }
  for (size_t l = 0; l < K; ++l)
    if (cur[l] != x[l]) std::memcpy(x[l], cur[l], lane * sizeof(__m128i));
  // Second loop: X = BlockMix(X ^ V[Integerify(X)]), n times.
  const uint64_t mask = n - 1;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t d[K];
    const __m128i* src[K];
    uint64_t steps = 0;
    for (size_t l = 0; l < K; ++l) {
      // Integerify: x0 of the last block; N <= 2^24 needs no more bits.
      const uint64_t j = static_cast<uint32_t>(_mm_cvtsi128_si32(x[l][lane - 4])) & mask;
      const uint64_t slot = std::min<uint64_t>(j / K, cap - 1);
      d[l] = j - slot * K;
      steps = std::max(steps, d[l]);
      src[l] = slots[l] + slot * lane;
      for (size_t k = 0; k < blocks; ++k)
        _mm_prefetch(reinterpret_cast<const char*>(src[l] + 4 * k), _MM_HINT_T0);
    }
    for (uint64_t s = 0; s < steps; ++s) {  // recompute V[j] from the stored entry
      __m128i* out[K];
      for (size_t l = 0; l < K; ++l) out[l] = s >= d[l] ? sink[l] : (s % 2 ? t1[l] : t0[l]);
      BlockMix<K, false>(src, src, out, r);
      for (size_t l = 0; l < K; ++l)
        if (s < d[l]) src[l] = out[l];
    }
    const __m128i* xin[K];
    for (size_t l = 0; l < K; ++l) xin[l] = x[l];
    BlockMix<K, true>(xin, src, y, r);
    for (size_t l = 0; l < K; ++l) std::swap(x[l], y[l]);
  }
  for (size_t l = 0; l < K; ++l) FromDiagonalOrder(x[l], blocks, b + l * 128 * r);
}

}  // namespace

void RoMixGroupSse2(uint8_t* b, size_t lanes, uint64_t n, size_t r, uint8_t* v,
                    uint8_t* scratch) {
  __m128i* vv = reinterpret_cast<__m128i*>(v);
  __m128i* ss = reinterpret_cast<__m128i*>(scratch);
  static_assert(kRoMixMaxSse2Group == 2);
  if (lanes == 1) {
    RoMixGroup<1>(b, n, r, vv, ss);
  } else {
    RoMixGroup<2>(b, n, r, vv, ss);
  }
}

}  // namespace haven::crypto::detail

#endif  // __SSE2__
