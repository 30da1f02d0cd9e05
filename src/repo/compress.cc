#include "repo/compress.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_createCCtx_advanced, ZSTD_customMem
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace haven {

int ZstdLevel(Compression c) {
  switch (c) {
    case Compression::kAuto: return 3;
    case Compression::kOff: return 0;
    case Compression::kMax: return 11;
    case Compression::kFastest: return 1;
    case Compression::kBetter: return 7;
  }
  return 3;
}

int DataZstdLevel(Compression c, size_t n) {
  return c == Compression::kAuto && n < kSmallBlobMax ? 1 : ZstdLevel(c);
}

int TreeZstdLevel(Compression c) {
  return c == Compression::kBetter || c == Compression::kMax ? ZstdLevel(c) : kJsonLevel;
}

Compression ParseCompression(std::string_view s) {
  if (s == "auto") return Compression::kAuto;
  if (s == "off") return Compression::kOff;
  if (s == "max") return Compression::kMax;
  if (s == "fastest") return Compression::kFastest;
  if (s == "better") return Compression::kBetter;
  Fail(ErrorCode::kInvalidArgument, "invalid compression mode \"" + std::string(s) +
                                        "\" (want auto, off, max, fastest or better)");
}

namespace {

// zstd sizes a context's workspace to each input and gives it back once it has been much
// larger than needed for a while (its "workspace too large" rule). With files of mixed
// sizes a thread's context freed and allocated a workspace of about 270 KiB every few
// hundred blobs, each a fresh mmap (above the fixed M_MMAP_THRESHOLD, cli/app.cc) whose
// pages were faulted in again: 2,600 of them in a backup of 200,000 small files, 0.4-0.7 s
// of system time. A context's memory comes from here instead: the largest block it freed
// is kept and handed out again for any request it can hold (at most two blocks per thread:
// the kept one and, while a larger workspace is in use, that one). Blocks above kKeepMax
// (the workspaces of the high levels on large chunks) go back at once, as zstd meant.
class KeptBlock {
 public:
  KeptBlock() = default;
  KeptBlock(const KeptBlock&) = delete;
  KeptBlock& operator=(const KeptBlock&) = delete;
  ~KeptBlock() { std::free(Base(kept_)); }

  ZSTD_customMem Mem() { return ZSTD_customMem{&Alloc, &Free, this}; }

 private:
  // Each block starts with its usable size; the caller's bytes follow at kHeader.
  static constexpr size_t kHeader = 64;
  static constexpr size_t kKeepMax = size_t{8} << 20;
  static void* Base(void* p) { return p ? static_cast<char*>(p) - kHeader : nullptr; }
  static size_t SizeOf(void* p) { return *static_cast<size_t*>(Base(p)); }

  static void* Alloc(void* opaque, size_t n) {
    auto* k = static_cast<KeptBlock*>(opaque);
    if (k->kept_ != nullptr && SizeOf(k->kept_) >= n) return std::exchange(k->kept_, nullptr);
    void* base = std::malloc(n + kHeader);
    if (base == nullptr) return nullptr;
    *static_cast<size_t*>(base) = n;
    return static_cast<char*>(base) + kHeader;
  }
  static void Free(void* opaque, void* p) {
    if (p == nullptr) return;
    auto* k = static_cast<KeptBlock*>(opaque);
    if (SizeOf(p) > kKeepMax || (k->kept_ != nullptr && SizeOf(k->kept_) >= SizeOf(p))) {
      std::free(Base(p));
      return;
    }
    std::free(Base(std::exchange(k->kept_, p)));
  }

  void* kept_ = nullptr;
};

struct CCtx {
  KeptBlock memory;  // outlives ctx (members are destroyed in reverse order)
  ZSTD_CCtx* ctx = ZSTD_createCCtx_advanced(memory.Mem());
  int level = -1000;
  CCtx() {
    if (ctx == nullptr) throw std::bad_alloc();
  }
  ~CCtx() { ZSTD_freeCCtx(ctx); }
};
struct DCtx {
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  ~DCtx() { ZSTD_freeDCtx(ctx); }
};
}  // namespace

Bytes ZstdCompress(ByteView data, int level) {
  Bytes out;
  out.resize(ZstdCompressInto(data, level, out));
  return out;
}

int ChooseAutoLevel(ByteView sample) {
  const int standard = ZstdLevel(Compression::kAuto);
  if (sample.size() < kLevelTrialMin || LooksIncompressible(sample)) return standard;
  // At most the first 1 MiB (a chunk is up to 8 MiB): the per-thread buffer stays small.
  sample = sample.first(std::min<size_t>(sample.size(), kLevelTrialMax));
  thread_local Bytes trial;
  const size_t fast = ZstdCompressInto(sample, 1, trial);
  const size_t normal = ZstdCompressInto(sample, standard, trial);
  return fast <= normal + normal / 100 ? 1 : standard;
}

namespace {

// This thread's compression context, set to `level`.
ZSTD_CCtx* ThreadCCtx(int level) {
  thread_local CCtx c;
  if (c.level != level) {
    ZSTD_CCtx_reset(c.ctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(c.ctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c.ctx, ZSTD_c_checksumFlag, 0);
    ZSTD_CCtx_setParameter(c.ctx, ZSTD_c_contentSizeFlag, 1);
    c.level = level;
  }
  return c.ctx;
}

size_t CompressTo(ByteView data, int level, uint8_t* out, size_t bound) {
  size_t n = ZSTD_compress2(ThreadCCtx(level), out, bound, data.data(), data.size());
  if (ZSTD_isError(n)) Fail(ErrorCode::kFatal, std::string("zstd: ") + ZSTD_getErrorName(n));
  return n;
}

}  // namespace

size_t ZstdCompressInto(ByteView data, int level, Bytes& out, size_t offset, size_t slack) {
  size_t bound = ZSTD_compressBound(data.size());
  if (out.size() < offset + bound + slack) out.resize(offset + bound + slack);  // grow only
  return CompressTo(data, level, out.data() + offset, bound);
}

size_t ZstdCompressInto(ByteView data, int level, HugeBuffer& out, size_t offset, size_t slack) {
  size_t bound = ZSTD_compressBound(data.size());
  if (out.size() < offset + bound + slack) out.Grow(std::bit_ceil(offset + bound + slack));
  return CompressTo(data, level, out.data() + offset, bound);
}

ZstdStreamWriter::ZstdStreamWriter(int level, Bytes& out) : ctx_(ZSTD_createCCtx()), out_(out) {
  auto* c = static_cast<ZSTD_CCtx*>(ctx_);
  if (c == nullptr) Fail(ErrorCode::kFatal, "zstd: cannot create a compression context");
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0);
}

ZstdStreamWriter::~ZstdStreamWriter() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(ctx_)); }

void ZstdStreamWriter::Write(ByteView piece) { Run(piece, false); }

void ZstdStreamWriter::End() { Run({}, true); }

void ZstdStreamWriter::Run(ByteView data, bool end) {
  auto* c = static_cast<ZSTD_CCtx*>(ctx_);
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  if (block_.empty()) block_.resize(ZSTD_CStreamOutSize());
  for (;;) {
    ZSTD_outBuffer ob{block_.data(), block_.size(), 0};
    const size_t left = ZSTD_compressStream2(c, &ob, &in, end ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(left)) Fail(ErrorCode::kFatal, std::string("zstd: ") + ZSTD_getErrorName(left));
    out_.insert(out_.end(), block_.begin(), block_.begin() + static_cast<long>(ob.pos));
    if (end ? left == 0 : in.pos == in.size) return;
  }
}

namespace {

ZSTD_DCtx* ThreadDCtx() {
  thread_local DCtx d;
  return d.ctx;
}

// The content size declared by a blob's frames, summed over all of them (a blob may be more
// than one frame; a skippable frame counts 0): ZSTD_CONTENTSIZE_UNKNOWN when one of them
// does not declare it, ZSTD_CONTENTSIZE_ERROR when the bytes are not frames.
unsigned long long DeclaredSize(ByteView in) {
  if (in.empty()) return ZSTD_CONTENTSIZE_ERROR;
  unsigned long long total = 0;
  while (!in.empty()) {
    const unsigned long long n = ZSTD_getFrameContentSize(in.data(), in.size());
    if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN) return n;
    const size_t len = ZSTD_findFrameCompressedSize(in.data(), in.size());
    if (ZSTD_isError(len) || len == 0 || total + n < total) return ZSTD_CONTENTSIZE_ERROR;
    total += n;
    in = in.subspan(len);
  }
  return total;
}

// Bytes or std::string: both hold bytes contiguously.
template <typename Out>
Out Decompress(ByteView frame, size_t expected_size, size_t max_size, std::string_view what) {
  ZSTD_DCtx* const dctx = ThreadDCtx();
  const unsigned long long declared = DeclaredSize(frame);
  if (declared == ZSTD_CONTENTSIZE_ERROR)
    Fail(ErrorCode::kCorrupt, std::string(what) + ": invalid zstd frame");
  size_t cap;
  if (expected_size) {
    // The expected size is the index's word: no buffer of that size before the frame
    // agrees (a hostile index may say 4 GiB; allocating and zero-filling it took 14 s).
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != expected_size)
      Fail(ErrorCode::kCorrupt, std::string(what) + ": decompressed size mismatch");
    // A frame without its size is streamed into a buffer that grows with what it holds.
    cap = declared == ZSTD_CONTENTSIZE_UNKNOWN ? 0 : expected_size;
    max_size = expected_size;
  } else if (declared != ZSTD_CONTENTSIZE_UNKNOWN) {
    if (declared > max_size)
      Fail(ErrorCode::kCorrupt, std::string(what) + ": decompressed size " +
                                    std::to_string(declared) + " exceeds limit");
    cap = declared;
  } else {
    cap = 0;
  }
  if (cap > 0 || declared == 0) {
    Out out(cap, 0);
    size_t n = ZSTD_decompressDCtx(dctx, reinterpret_cast<uint8_t*>(out.data()), out.size(), frame.data(), frame.size());
    if (ZSTD_isError(n))
      Fail(ErrorCode::kCorrupt,
           std::string(what) + ": zstd decompression failed: " + ZSTD_getErrorName(n));
    if (expected_size && n != expected_size)
      Fail(ErrorCode::kCorrupt, std::string(what) + ": decompressed size mismatch");
    out.resize(n);
    return out;
  }
  // Unknown content size: stream with a growing buffer, bounded by max_size.
  Out out;
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  size_t chunk = ZSTD_DStreamOutSize();
  for (;;) {
    size_t old = out.size();
    if (old + chunk > max_size + chunk)
      Fail(ErrorCode::kCorrupt, std::string(what) + ": decompressed data exceeds limit");
    out.resize(old + chunk);
    ZSTD_outBuffer ob{reinterpret_cast<uint8_t*>(out.data()) + old, chunk, 0};
    size_t r = ZSTD_decompressStream(dctx, &ob, &in);
    if (ZSTD_isError(r))
      Fail(ErrorCode::kCorrupt,
           std::string(what) + ": zstd decompression failed: " + ZSTD_getErrorName(r));
    out.resize(old + ob.pos);
    if (r == 0 && in.pos == in.size) break;  // (r == 0 with input left: the next frame)
    if (in.pos == in.size && ob.pos == 0)
      Fail(ErrorCode::kCorrupt, std::string(what) + ": truncated zstd frame");
  }
  if (out.size() > max_size)
    Fail(ErrorCode::kCorrupt, std::string(what) + ": decompressed data exceeds limit");
  if (expected_size && out.size() != expected_size)
    Fail(ErrorCode::kCorrupt, std::string(what) + ": decompressed size mismatch");
  return out;
}

}  // namespace

Bytes ZstdDecompress(ByteView frame, size_t expected_size, size_t max_size,
                     std::string_view what) {
  return Decompress<Bytes>(frame, expected_size, max_size, what);
}

void ZstdDecompressInto(ByteView frame, std::span<uint8_t> out, std::string_view what) {
  unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR)
    Fail(ErrorCode::kCorrupt, std::string(what) + ": invalid zstd frame");
  size_t n = ZSTD_decompressDCtx(ThreadDCtx(), out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n))
    Fail(ErrorCode::kCorrupt,
         std::string(what) + ": zstd decompression failed: " + ZSTD_getErrorName(n));
  if (n != out.size()) Fail(ErrorCode::kCorrupt, std::string(what) + ": decompressed size mismatch");
}

std::string ZstdDecompressToString(ByteView frame, size_t max_size, std::string_view what) {
  return Decompress<std::string>(frame, 0, max_size, what);
}

ZstdStreamReader::ZstdStreamReader(ByteView frame, size_t max_size, std::string_view what)
    : ctx_(ZSTD_createDCtx()), frame_(frame), max_(max_size), what_(what) {
  if (!ctx_) throw std::bad_alloc();
}

ZstdStreamReader::~ZstdStreamReader() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(ctx_)); }

size_t ZstdStreamReader::Read(uint8_t* dst, size_t cap) {
  if (done_ || cap == 0) return 0;
  ZSTD_inBuffer in{frame_.data(), frame_.size(), pos_};
  ZSTD_outBuffer out{dst, cap, 0};
  while (out.pos == 0) {
    size_t r = ZSTD_decompressStream(static_cast<ZSTD_DCtx*>(ctx_), &out, &in);
    if (ZSTD_isError(r))
      Fail(ErrorCode::kCorrupt, what_ + ": zstd decompression failed: " + ZSTD_getErrorName(r));
    if (r == 0) {
      done_ = true;
      break;
    }
    if (in.pos == in.size && out.pos < out.size)
      Fail(ErrorCode::kCorrupt, what_ + ": truncated zstd frame");
  }
  pos_ = in.pos;
  total_ += out.pos;
  if (total_ > max_) Fail(ErrorCode::kCorrupt, what_ + ": decompressed data exceeds limit");
  return out.pos;
}

bool LooksIncompressible(ByteView data) {
  // Byte-entropy estimate over 12 KiB: three spread samples of 4 KiB, or the whole blob
  // when it is shorter (each byte counted once). Random or already compressed data sits
  // near 8 bits/byte; text and binaries sit far below. Four tables, summed at the end: a
  // run of one byte value would make each count wait for the last (a store-to-load
  // dependency), which made this 4 % of the CPU of a cold backup of small text files.
  constexpr size_t kSample = 4096;
  if (data.size() < kSample) return false;
  uint32_t counts[4][256] = {};
  auto count = [&counts](const uint8_t* p, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      ++counts[0][p[i]];
      ++counts[1][p[i + 1]];
      ++counts[2][p[i + 2]];
      ++counts[3][p[i + 3]];
    }
    for (; i < n; ++i) ++counts[0][p[i]];
  };
  size_t total = 0;
  if (data.size() < 3 * kSample) {
    count(data.data(), data.size());
    total = data.size();
  } else {
    for (int s = 0; s < 3; ++s) count(data.data() + (data.size() - kSample) * s / 2, kSample);
    total = 3 * kSample;
  }
  // H = log2(total) - sum(c * log2(c)) / total, c * log2(c) from a table: a log2 per byte
  // value seen (up to 256 per blob) was 2 % of the CPU of a cold backup of /usr/share.
  static const std::vector<double> kCLog2C = [] {
    std::vector<double> t(3 * kSample + 1, 0.0);
    for (size_t c = 1; c < t.size(); ++c) t[c] = double(c) * std::log2(double(c));
    return t;
  }();
  double sum = 0;
  for (int b = 0; b < 256; ++b)
    sum += kCLog2C[counts[0][b] + counts[1][b] + counts[2][b] + counts[3][b]];
  const double h = std::log2(double(total)) - sum / double(total);
  return h > 7.9;
}

}  // namespace haven
