// scrypt's ROMix (RFC 7914 §5), the inner loop of Scrypt (crypto/kdf.h), on a group of up to
// kRoMixMaxGroup lanes that share the memory of one lane.
//
// One lane is a chain of Salsa20/8 calls, each waiting for the one before: a single lane runs
// at the latency of that chain and leaves most of the core idle. A group of k lanes is
// computed in lock step, k independent chains interleaved, in about the time of one. To keep
// the memory of one lane (n*128*r bytes), each lane of a group stores only every k-th entry
// of its V table (n/k entries) and recomputes the others from the stored one before it
// (time-memory trade-off): a pair of lanes does 2.75*n BlockMix steps (n for V, n for the
// second loop, and the recomputation that either lane needs in 3 of 4 steps of it) where two
// single lanes do 4*n. Groups of three measured slower per lane than a pair plus a single
// lane (their recomputation grows to 1.67*n, and twelve state vectors do not fit SSE2's
// sixteen registers with their temporaries). The result is bit for bit scrypt's.
//
// Three implementations give the same bytes: SSE2 (x86-64; groups of up to two lanes), which
// keeps each 64-byte block as four vectors in the "diagonal" word order so a Salsa20/8
// half-round is four vector steps without leaving registers; AVX-512 (chosen at run time on a
// CPU that has it; groups of up to four), the same steps with the four lanes of a group in one
// 512-bit vector and one-instruction rotations; and a portable scalar one (one lane at a time,
// full V table). On a Xeon with both, eight lanes on two threads (one group of four each)
// took 0.43x the time of the SSE2 pairs (docs/format.md §3).
#pragma once

#include <cstddef>
#include <cstdint>

namespace haven::crypto::detail {

inline constexpr size_t kRoMixMaxGroup = 4;      // the largest group of any implementation
inline constexpr size_t kRoMixMaxSse2Group = 2;  // the SSE2 one's

// scrypt's words are little-endian, whatever the machine's order.
inline uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline void StoreLe32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v >> 16);
  p[3] = uint8_t(v >> 24);
}

// The vector ROMixes keep each 64-byte block in the "diagonal" word order (kdf_romix_sse2.cc):
// `blocks` blocks of little-endian words at `in` to that order at `out`, and back.
void ToDiagonalOrder(const uint8_t* in, size_t blocks, void* out);
void FromDiagonalOrder(const void* in, size_t blocks, uint8_t* out);

// Bytes of scratch (besides V) a group of up to kRoMixMaxGroup lanes needs for r.
inline size_t RoMixScratchBytes(size_t r) { return 5 * kRoMixMaxGroup * 128 * r; }

// b (128*r bytes, little-endian words) = ROMix_r(b, n). v: scratch of n*128*r bytes, xy:
// scratch of 256*r bytes, both 64-byte aligned; their contents on entry do not matter.
void RoMixScalar(uint8_t* b, uint64_t n, size_t r, uint8_t* v, uint8_t* xy);

#if defined(__SSE2__)
inline constexpr bool kHaveRoMixSse2 = true;
// The `lanes` lanes at b, b + 128*r, ... (1 <= lanes <= min(kRoMixMaxSse2Group, n)) each replaced
// by its ROMix_r(., n), computed together. v: n*128*r bytes, scratch: RoMixScratchBytes(r)
// bytes, both 16-byte aligned.
void RoMixGroupSse2(uint8_t* b, size_t lanes, uint64_t n, size_t r, uint8_t* v,
                    uint8_t* scratch);
#else
inline constexpr bool kHaveRoMixSse2 = false;
#endif

#if defined(__x86_64__)
// Whether this CPU (and the kernel) can run RoMixGroupAvx512.
bool RoMixAvx512Usable();
// As RoMixGroupSse2 for 1 <= lanes <= min(kRoMixMaxGroup, n); only when RoMixAvx512Usable().
void RoMixGroupAvx512(uint8_t* b, size_t lanes, uint64_t n, size_t r, uint8_t* v, uint8_t* scratch);
#else
inline bool RoMixAvx512Usable() { return false; }
#endif

// The largest group RoMixGroup computes at once on this machine.
inline size_t RoMixGroupLimit() {
  if (RoMixAvx512Usable()) return kRoMixMaxGroup;
  return kHaveRoMixSse2 ? kRoMixMaxSse2Group : 1;
}

// The lanes at b, b + 128*r, ... (1 <= lanes <= min(RoMixGroupLimit(), n)) with the fastest
// implementation this machine runs.
inline void RoMixGroup(uint8_t* b, size_t lanes, uint64_t n, size_t r, uint8_t* v,
                       uint8_t* scratch) {
#if defined(__x86_64__)
  if (RoMixAvx512Usable()) return RoMixGroupAvx512(b, lanes, n, r, v, scratch);
#endif
#if defined(__SSE2__)
  RoMixGroupSse2(b, lanes, n, r, v, scratch);
#else
  for (size_t k = 0; k < lanes; ++k) RoMixScalar(b + k * 128 * r, n, r, v, scratch);
#endif
}

}  // namespace haven::crypto::detail
