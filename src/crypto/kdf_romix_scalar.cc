// The portable ROMix: plain 32-bit Salsa20/8 (crypto/kdf_romix.h).
#include <cstdint>
#include <cstring>
#include <utility>

#include "crypto/kdf_romix.h"

namespace haven::crypto::detail {
namespace {

// The hot loop only stays in registers if everything below is inlined into RoMixScalar.
#define HAVEN_INLINE inline __attribute__((always_inline))

// A 64-byte block as 16 little-endian words.
struct Block {
  uint32_t w[16];
};

HAVEN_INLINE uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// b += Salsa20/8 rounds of b.
HAVEN_INLINE void Salsa8(uint32_t b[16]) {
  uint32_t x0 = b[0], x1 = b[1], x2 = b[2], x3 = b[3], x4 = b[4], x5 = b[5], x6 = b[6], x7 = b[7],
           x8 = b[8], x9 = b[9], x10 = b[10], x11 = b[11], x12 = b[12], x13 = b[13], x14 = b[14],
           x15 = b[15];
  for (int i = 0; i < 4; ++i) {
    // Columns.
    x4 ^= Rotl(x0 + x12, 7), x9 ^= Rotl(x5 + x1, 7), x14 ^= Rotl(x10 + x6, 7);
    x3 ^= Rotl(x15 + x11, 7);
    x8 ^= Rotl(x4 + x0, 9), x13 ^= Rotl(x9 + x5, 9), x2 ^= Rotl(x14 + x10, 9);
    x7 ^= Rotl(x3 + x15, 9);
    x12 ^= Rotl(x8 + x4, 13), x1 ^= Rotl(x13 + x9, 13), x6 ^= Rotl(x2 + x14, 13);
    x11 ^= Rotl(x7 + x3, 13);
    x0 ^= Rotl(x12 + x8, 18), x5 ^= Rotl(x1 + x13, 18), x10 ^= Rotl(x6 + x2, 18);
    x15 ^= Rotl(x11 + x7, 18);
    // Rows.
    x1 ^= Rotl(x0 + x3, 7), x6 ^= Rotl(x5 + x4, 7), x11 ^= Rotl(x10 + x9, 7);
    x12 ^= Rotl(x15 + x14, 7);
    x2 ^= Rotl(x1 + x0, 9), x7 ^= Rotl(x6 + x5, 9), x8 ^= Rotl(x11 + x10, 9);
    x13 ^= Rotl(x12 + x15, 9);
    x3 ^= Rotl(x2 + x1, 13), x4 ^= Rotl(x7 + x6, 13), x9 ^= Rotl(x8 + x11, 13);
    x14 ^= Rotl(x13 + x12, 13);
    x0 ^= Rotl(x3 + x2, 18), x5 ^= Rotl(x4 + x7, 18), x10 ^= Rotl(x9 + x8, 18);
    x15 ^= Rotl(x14 + x13, 18);
  }
  b[0] += x0, b[1] += x1, b[2] += x2, b[3] += x3, b[4] += x4, b[5] += x5, b[6] += x6;
  b[7] += x7, b[8] += x8, b[9] += x9, b[10] += x10, b[11] += x11, b[12] += x12;
  b[13] += x13, b[14] += x14, b[15] += x15;
}

// out = BlockMix(in), or BlockMix(in ^ in2) when kXor; 2r blocks each. The even-indexed
// outputs go to the first half of out, the odd ones to the second half (RFC 7914 §4).
template <bool kXor>
HAVEN_INLINE void BlockMix(const Block* in, const Block* in2, Block* out, size_t r) {
  Block x = in[2 * r - 1];
  if constexpr (kXor) {
    for (int k = 0; k < 16; ++k) x.w[k] ^= in2[2 * r - 1].w[k];
  }
  for (size_t i = 0; i < 2 * r; ++i) {
    for (int k = 0; k < 16; ++k) x.w[k] ^= in[i].w[k];
    if constexpr (kXor) {
      for (int k = 0; k < 16; ++k) x.w[k] ^= in2[i].w[k];
    }
    Salsa8(x.w);
    out[(i & 1) ? r + i / 2 : i / 2] = x;
  }
}

}  // namespace

void RoMixScalar(uint8_t* b, uint64_t n, size_t r, uint8_t* v_bytes, uint8_t* xy) {
  const size_t lane_blocks = 2 * r;
  Block* v = reinterpret_cast<Block*>(v_bytes);
  Block* x = reinterpret_cast<Block*>(xy);
  Block* y = x + lane_blocks;
  for (size_t i = 0; i < lane_blocks * 16; ++i) x[i / 16].w[i % 16] = LoadLe32(b + 4 * i);
  std::memcpy(v, x, lane_blocks * sizeof(Block));
  for (uint64_t i = 0; i + 1 < n; ++i) {
    BlockMix<false>(v + i * lane_blocks, nullptr, v + (i + 1) * lane_blocks, r);
  }
  BlockMix<false>(v + (n - 1) * lane_blocks, nullptr, x, r);
  // Integerify: the first word of the last block; N <= 2^24 needs no more bits.
  const uint64_t mask = n - 1;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t j = x[lane_blocks - 1].w[0] & mask;
    BlockMix<true>(x, v + j * lane_blocks, y, r);
    std::swap(x, y);
  }
  for (size_t i = 0; i < lane_blocks * 16; ++i) StoreLe32(b + 4 * i, x[i / 16].w[i % 16]);
}

// kDiag[p]: the word of the block at position p in diagonal order.
constexpr int kDiag[16] = {0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11};

void ToDiagonalOrder(const uint8_t* in, size_t blocks, void* out) {
  uint8_t* o = static_cast<uint8_t*>(out);
  for (size_t k = 0; k < blocks; ++k) {
    for (int p = 0; p < 16; ++p) {
      const uint32_t w = LoadLe32(in + 64 * k + 4 * kDiag[p]);
      std::memcpy(o + 64 * k + 4 * p, &w, 4);
    }
  }
}

void FromDiagonalOrder(const void* in, size_t blocks, uint8_t* out) {
  const uint8_t* i8 = static_cast<const uint8_t*>(in);
  for (size_t k = 0; k < blocks; ++k) {
    for (int p = 0; p < 16; ++p) {
      uint32_t w;
      std::memcpy(&w, i8 + 64 * k + 4 * p, 4);
      StoreLe32(out + 64 * k + 4 * kDiag[p], w);
    }
  }
}

}  // namespace haven::crypto::detail
