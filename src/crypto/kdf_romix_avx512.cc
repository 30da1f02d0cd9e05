// The AVX-512 ROMix for a group of up to four lanes (crypto/kdf_romix.h). Memory holds every
// block as the SSE2 ROMix does (kdf_romix_sse2.cc): per lane, four 16-byte vectors in the
// diagonal word order, so V, B and the scratch blocks have the same layout in both. In
// registers one 512-bit vector holds the same quarter of one block of all four lanes, one
// lane per 128-bit part: Salsa20/8's steps are the SSE2 ones on four lanes at once, its word
// shuffles stay inside each part (vpshufd), and a rotation is one instruction (vprold) instead
// of two shifts and an XOR. Quarters are gathered from the lanes' blocks on the way in
// (vinserti32x4) and scattered on the way out (vextracti32x4).
//
// One chain of Salsa20/8 calls for four lanes costs about what the SSE2 chain costs for one,
// so the group keeps the memory of one lane as the SSE2 pair does: lane k of K stores V
// entries 0, K, 2K, ... and recomputes the others; in lock step every lane runs the largest
// recomputation of the group, a lane that needs fewer sends the extra outputs to a scratch
// block nothing reads. Lanes beyond K (K < 4) compute on lane 0's input and store nothing.
//
// Every function carries the target attribute and is called only after RoMixAvx512Usable()
// said yes: the rest of the program is built for baseline x86-64.
#include "crypto/kdf_romix.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace haven::crypto::detail {
namespace {

#define HAVEN_AVX512 __attribute__((target("avx512f")))
#define HAVEN_INLINE inline __attribute__((always_inline, target("avx512f")))

constexpr size_t kWidth = 4;  // lanes in one 512-bit vector
// The zero-masking forms with every element selected are the plain instructions; GCC 12's
// unmasked intrinsics start from _mm512_undefined_epi32 and trip -Wmaybe-uninitialized.
constexpr __mmask16 kAll = 0xffff;
constexpr __mmask8 kAll4 = 0xf;

// One block of each of the four lanes, quarter by quarter.
struct Quad {
  __m512i a, b, c, d;
};

template <int k>
HAVEN_INLINE __m512i XorRotl(__m512i x, __m512i t) {
  return _mm512_xor_si512(x, _mm512_maskz_rol_epi32(kAll, t, k));
}

HAVEN_INLINE __m512i Shuffle93(__m512i x) {
  return _mm512_maskz_shuffle_epi32(kAll, x, _MM_PERM_CBAD);
}
HAVEN_INLINE __m512i Shuffle4e(__m512i x) {
  return _mm512_maskz_shuffle_epi32(kAll, x, _MM_PERM_BADC);
}
HAVEN_INLINE __m512i Shuffle39(__m512i x) {
  return _mm512_maskz_shuffle_epi32(kAll, x, _MM_PERM_ADCB);
}

// s += Salsa20/8 rounds of s, for the four lanes at once (the SSE2 steps; see there).
HAVEN_INLINE void Salsa8(Quad& s) {
  Quad x = s;
  for (int i = 0; i < 4; ++i) {
    x.b = XorRotl<7>(x.b, _mm512_add_epi32(x.a, x.d));
    x.c = XorRotl<9>(x.c, _mm512_add_epi32(x.b, x.a));
    x.d = XorRotl<13>(x.d, _mm512_add_epi32(x.c, x.b));
    x.a = XorRotl<18>(x.a, _mm512_add_epi32(x.d, x.c));
    x.b = Shuffle93(x.b);
    x.c = Shuffle4e(x.c);
    x.d = Shuffle39(x.d);
    x.d = XorRotl<7>(x.d, _mm512_add_epi32(x.a, x.b));
    x.c = XorRotl<9>(x.c, _mm512_add_epi32(x.d, x.a));
    x.b = XorRotl<13>(x.b, _mm512_add_epi32(x.c, x.d));
    x.a = XorRotl<18>(x.a, _mm512_add_epi32(x.b, x.c));
    x.b = Shuffle39(x.b);
    x.c = Shuffle4e(x.c);
    x.d = Shuffle93(x.d);
  }
  s.a = _mm512_add_epi32(s.a, x.a);
  s.b = _mm512_add_epi32(s.b, x.b);
  s.c = _mm512_add_epi32(s.c, x.c);
  s.d = _mm512_add_epi32(s.d, x.d);
}

// The 16-byte vector i of lanes 0..K-1 (pointers p), one lane per 128-bit part; parts K..3
// repeat lane 0's.
template <size_t K>
HAVEN_INLINE __m512i Gather(const __m128i* const (&p)[K], size_t i) {
  const __m128i v0 = _mm_load_si128(p[0] + i);
  __m512i z = _mm512_maskz_broadcast_i32x4(kAll, v0);
  if constexpr (K > 1) z = _mm512_inserti32x4(z, _mm_load_si128(p[1] + i), 1);
  if constexpr (K > 2) z = _mm512_inserti32x4(z, _mm_load_si128(p[2] + i), 2);
  if constexpr (K > 3) z = _mm512_inserti32x4(z, _mm_load_si128(p[3] + i), 3);
  return z;
}
template <size_t K>
HAVEN_INLINE void Scatter(__m128i* const (&p)[K], size_t i, __m512i z) {
  _mm_store_si128(p[0] + i, _mm512_maskz_extracti32x4_epi32(kAll4, z, 0));
  if constexpr (K > 1) _mm_store_si128(p[1] + i, _mm512_maskz_extracti32x4_epi32(kAll4, z, 1));
  if constexpr (K > 2) _mm_store_si128(p[2] + i, _mm512_maskz_extracti32x4_epi32(kAll4, z, 2));
  if constexpr (K > 3) _mm_store_si128(p[3] + i, _mm512_maskz_extracti32x4_epi32(kAll4, z, 3));
}

template <size_t K>
HAVEN_INLINE void Xor(Quad& s, const __m128i* const (&p)[K], size_t i) {
  s.a = _mm512_xor_si512(s.a, Gather<K>(p, i));
  s.b = _mm512_xor_si512(s.b, Gather<K>(p, i + 1));
  s.c = _mm512_xor_si512(s.c, Gather<K>(p, i + 2));
  s.d = _mm512_xor_si512(s.d, Gather<K>(p, i + 3));
}

// Per lane: out = BlockMix(in), or BlockMix(in ^ in2) when kXor; as in the SSE2 ROMix.
template <size_t K, bool kXor>
HAVEN_INLINE void BlockMix(const __m128i* const (&in)[K], const __m128i* const (&in2)[K],
                           __m128i* const (&out)[K], size_t r) {
  const size_t last = 4 * (2 * r - 1);
  const __m512i zero = _mm512_setzero_si512();
  Quad x{zero, zero, zero, zero};
  Xor<K>(x, in, last);
  if constexpr (kXor) Xor<K>(x, in2, last);
  for (size_t i = 0; i < r; ++i) {
    for (size_t half = 0; half < 2; ++half) {
      Xor<K>(x, in, 8 * i + 4 * half);
      if constexpr (kXor) Xor<K>(x, in2, 8 * i + 4 * half);
      Salsa8(x);
      const size_t o = 4 * (half * r + i);
      Scatter<K>(out, o, x.a);
      Scatter<K>(out, o + 1, x.b);
      Scatter<K>(out, o + 2, x.c);
      Scatter<K>(out, o + 3, x.d);
    }
  }
}

// The SSE2 RoMixGroup's two loops, step for step (see there), on 512-bit vectors.
template <size_t K>
HAVEN_AVX512 void RoMixGroup(uint8_t* b, uint64_t n, size_t r, __m128i* v, __m128i* scratch) {
  const size_t blocks = 2 * r;
  const size_t lane = 4 * blocks;
  const uint64_t cap = n / K;
  __m128i *slots[K], *x[K], *y[K], *t0[K], *t1[K], *sink[K];
  for (size_t l = 0; l < K; ++l) {
    slots[l] = v + l * cap * lane;
    __m128i* s = scratch + 5 * l * lane;
    x[l] = s, y[l] = s + lane, t0[l] = s + 2 * lane, t1[l] = s + 3 * lane, sink[l] = s + 4 * lane;
  }
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
  const uint64_t mask = n - 1;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t d[K];
    const __m128i* src[K];
    uint64_t steps = 0;
    for (size_t l = 0; l < K; ++l) {
      const uint64_t j = static_cast<uint32_t>(_mm_cvtsi128_si32(x[l][lane - 4])) & mask;
      const uint64_t slot = std::min<uint64_t>(j / K, cap - 1);
      d[l] = j - slot * K;
      steps = std::max(steps, d[l]);
      src[l] = slots[l] + slot * lane;
      for (size_t k = 0; k < blocks; ++k)
        _mm_prefetch(reinterpret_cast<const char*>(src[l] + 4 * k), _MM_HINT_T0);
    }
    for (uint64_t s = 0; s < steps; ++s) {
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

bool RoMixAvx512Usable() {
  // HAVEN_KDF_NO_AVX512 (any value) keeps to the SSE2 ROMix: bench/kdf.sh times both in one
  // run on one machine, and a test can run the SSE2 path where AVX-512 is present.
  static const bool usable =
      __builtin_cpu_supports("avx512f") && std::getenv("HAVEN_KDF_NO_AVX512") == nullptr;
  return usable;
}

void RoMixGroupAvx512(uint8_t* b, size_t lanes, uint64_t n, size_t r, uint8_t* v,
                      uint8_t* scratch) {
  __m128i* vv = reinterpret_cast<__m128i*>(v);
  __m128i* ss = reinterpret_cast<__m128i*>(scratch);
  static_assert(kRoMixMaxGroup == kWidth);
  switch (lanes) {
    case 1:
      RoMixGroup<1>(b, n, r, vv, ss);
      break;
    case 2:
      RoMixGroup<2>(b, n, r, vv, ss);
      break;
    case 3:
      RoMixGroup<3>(b, n, r, vv, ss);
      break;
    default:
      RoMixGroup<4>(b, n, r, vv, ss);
      break;
  }
}

}  // namespace haven::crypto::detail

#endif  // __x86_64__
