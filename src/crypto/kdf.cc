#include "crypto/kdf.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/huge_buffer.h"

namespace haven::crypto {
namespace {

[[noreturn]] void BadParam(const std::string& what) {
  Fail(ErrorCode::kCorrupt, "scrypt parameters rejected: " + what);
}

// Scratch memory for one lane (or the B buffer), not value-initialised: ROMix writes every
// word before reading it. Large lanes are huge-page mappings (core/huge_buffer.h): fewer
// page faults, and random block reads hit the TLB. Memory from the heap is cleansed before
// it is freed; unmapped memory is zeroed by the kernel.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(size_t bytes) : buf_(bytes), size_(bytes) {}
  ~ScratchBuffer() {
    if (!buf_.mapped()) OPENSSL_cleanse(buf_.data(), size_);
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  uint8_t* data() { return buf_.data(); }

 private:
  HugeBuffer buf_;
  size_t size_;
};

uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
void StoreLe32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v >> 16);
  p[3] = uint8_t(v >> 24);
}

// The hot loop only stays in registers if everything below is inlined into RoMix.
#define HAVEN_INLINE inline __attribute__((always_inline))

// A 64-byte block as 16 little-endian words.
struct Block {
  uint32_t w[16];
};

HAVEN_INLINE uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// b += Salsa20/8 rounds of b. Plain 32-bit code: the four quarter-rounds of each half-round
// are independent, and scalar add/rotate/xor on four ALUs beats SSE2 (no vector rotate)
// for a single lane.
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

// One scrypt lane: b (128*r bytes) = ROMix_r(b, n). v holds n*2r blocks, xy 4r blocks.
void RoMix(uint8_t* b, uint64_t n, size_t r, Block* v, Block* xy) {
  const size_t lane_blocks = 2 * r;
  Block* x = xy;
  Block* y = xy + lane_blocks;
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

void Pbkdf2Sha256(std::string_view password, ByteView salt, uint8_t* out, size_t out_len) {
  static const uint8_t kEmpty = 0;
  const uint8_t* salt_ptr = salt.empty() ? &kEmpty : salt.data();
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), salt_ptr,
                        static_cast<int>(salt.size()), 1, EVP_sha256(), static_cast<int>(out_len),
                        out) != 1) {
    Fail(ErrorCode::kFatal, "OpenSSL failure in PBKDF2-HMAC-SHA256");
  }
}

}  // namespace

void CheckScryptParams(const ScryptParams& p) {
  const std::string n_str = "N=" + std::to_string(p.n);
  if (p.n <= 1) BadParam(n_str + " (must be greater than 1)");
  if ((p.n & (p.n - 1)) != 0) BadParam(n_str + " (must be a power of two)");
  if (p.n > kScryptMaxN) BadParam(n_str + " (limit is 2^24)");
  if (p.r < 1) BadParam("r=0 (must be at least 1)");
  if (p.p < 1) BadParam("p=0 (must be at least 1)");
  const uint64_t rp = uint64_t{p.r} * p.p;
  if (rp >= (uint64_t{1} << 30)) {
    BadParam("r*p=" + std::to_string(rp) + " (r=" + std::to_string(p.r) +
             ", p=" + std::to_string(p.p) + "; must be below 2^30)");
  }
  if (p.p > kScryptMaxP) BadParam("p=" + std::to_string(p.p) + " (limit is 1024)");
  // N <= 2^24 and r < 2^32, so this cannot overflow.
  const uint64_t lane = ScryptLaneMemory(p);
  if (lane > kScryptMaxLaneMemory) {
    BadParam("memory 128*r*N=" + std::to_string(lane) + " bytes for r=" + std::to_string(p.r) +
             ", " + n_str + " (limit is 1 GiB)");
  }
  // The p lanes' input/output buffer B (and the salt of the final PBKDF2).
  const uint64_t b_bytes = 128 * rp;
  if (b_bytes > kScryptMaxLaneMemory) {
    BadParam("buffer 128*r*p=" + std::to_string(b_bytes) + " bytes (limit is 1 GiB)");
  }
  // lane <= 2^30 and p <= 2^10.
  if (lane * p.p > kScryptMaxWork) {
    BadParam("work 128*r*N*p=" + std::to_string(lane * p.p) + " for p=" + std::to_string(p.p) +
             " (limit is 64 GiB)");
  }
}

Bytes Scrypt(std::string_view password, ByteView salt, const ScryptParams& p, size_t dk_len,
             int threads) {
  CheckScryptParams(p);
  if (dk_len < 1 || dk_len > (size_t{1} << 30)) {
    Fail(ErrorCode::kFatal, "scrypt: derived key length " + std::to_string(dk_len));
  }
  if (password.size() > INT_MAX || salt.size() > INT_MAX) {
    Fail(ErrorCode::kFatal, "scrypt: password or salt too long");
  }
  const size_t r = p.r;
  const size_t lane_bytes = 128 * r;
  const size_t b_bytes = lane_bytes * p.p;  // <= 1 GiB, checked above
  const size_t lane_mem = ScryptLaneMemory(p);
  size_t workers = threads > 0 ? size_t(threads) : std::thread::hardware_concurrency();
  workers = std::clamp<size_t>(workers, 1, p.p);
  workers = std::min<size_t>(workers, std::max<size_t>(1, kScryptMaxLaneMemory / lane_mem));

  try {
    ScratchBuffer b(b_bytes);
    Pbkdf2Sha256(password, salt, b.data(), b_bytes);

    // Each worker takes the next unclaimed lane until none is left.
    std::atomic<uint32_t> next_lane{0};
    std::atomic<bool> failed{false};
    auto work = [&](std::exception_ptr* err) {
      try {
        ScratchBuffer v(lane_mem);
        ScratchBuffer xy(2 * lane_bytes);
        while (!failed.load(std::memory_order_relaxed)) {
          const uint32_t lane = next_lane.fetch_add(1);
          if (lane >= p.p) break;
          RoMix(b.data() + size_t{lane} * lane_bytes, p.n, r, reinterpret_cast<Block*>(v.data()),
                reinterpret_cast<Block*>(xy.data()));
        }
      } catch (...) {
        *err = std::current_exception();
        failed = true;
      }
    };

    std::vector<std::exception_ptr> errors(workers);
    std::vector<std::thread> pool;
    pool.reserve(workers);  // no reallocation (and no bad_alloc) once threads are running
    for (size_t t = 1; t < workers; ++t) {
      try {
        pool.emplace_back(work, &errors[t]);
      } catch (const std::system_error&) {
        break;  // fewer threads: the remaining lanes are picked up by those running
      }
    }
    work(&errors[0]);
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }

    Bytes dk(dk_len);
    Pbkdf2Sha256(password, ByteView(b.data(), b_bytes), dk.data(), dk_len);
    return dk;
  } catch (const std::bad_alloc&) {
    Fail(ErrorCode::kFatal, "scrypt: out of memory (" + std::to_string(lane_mem) +
                                " bytes per lane, " + std::to_string(workers) + " lanes at once)");
  }
}

}  // namespace haven::crypto
