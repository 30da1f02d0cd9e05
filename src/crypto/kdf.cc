#include "crypto/kdf.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/huge_buffer.h"
#include "crypto/kdf_romix.h"

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

    // The lanes are split into `workers` shares of consecutive lanes, as even as can be.
    // Each worker takes the next unclaimed share until none is left, and computes it in
    // groups that share one lane's memory (crypto/kdf_romix.h): p=6 on two threads is a
    // group of three on each thread with AVX-512, a pair and a single lane with SSE2.
    const size_t group = detail::RoMixGroupLimit();
    std::atomic<size_t> next_share{0};
    std::atomic<bool> failed{false};
    auto work = [&](std::exception_ptr* err) {
      try {
        ScratchBuffer v(lane_mem);
        ScratchBuffer scratch(detail::RoMixScratchBytes(r));
        while (!failed.load(std::memory_order_relaxed)) {
          const size_t share = next_share.fetch_add(1);
          if (share >= workers) break;
          const size_t end = (share + 1) * p.p / workers;
          for (size_t lane = share * p.p / workers; lane < end;) {
            const size_t lanes = std::min<size_t>({group, end - lane, static_cast<size_t>(p.n)});
            detail::RoMixGroup(b.data() + lane * lane_bytes, lanes, p.n, r, v.data(),
                               scratch.data());
            lane += lanes;
          }
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
