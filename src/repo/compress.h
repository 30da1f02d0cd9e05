// zstd compression for blobs and unpacked files (docs/format.md §12). Contexts are reused per
// thread. Levels: restic "auto" ~ zstd 3, "max" ~ zstd 11, "off" = no data compression.
#pragma once

#include <string>
#include <string_view>

#include "core/bytes.h"
#include "core/huge_buffer.h"

namespace haven {

enum class Compression { kAuto, kOff, kMax, kFastest, kBetter };

// zstd level for a mode; 0 for kOff.
int ZstdLevel(Compression c);
// The level of the repository's JSON: snapshots, index and lock files, and tree blobs unless
// the mode asks for more (TreeZstdLevel). Level 1, not 3: on JSON that is mostly random hex ids
// its frames are smaller as well as about twice as fast (docs/format.md §12: a real
// index file 0.308 vs 0.333 of its size, 3.2 vs 6.9 ms; 400 trees 0.209 vs 0.213).
inline constexpr int kJsonLevel = 1;
// "auto"'s level for a data blob shorter than kSmallBlobMax: 1. On inputs this short
// zstd's level 3 finds almost nothing level 1 misses, and each frame's fixed cost dominates
// (docs/format.md §12: text of 1 KiB 0.545 vs 0.542 of its size, 6.1 vs 8.0 us a frame).
inline constexpr size_t kSmallBlobMax = 4096;
// The level of a data blob of n bytes under mode c, without a trial's choice.
int DataZstdLevel(Compression c, size_t n);
// Tree blobs: kJsonLevel, or the mode's own level for better and max.
int TreeZstdLevel(Compression c);
// Parses "auto", "off", "max", "fastest", "better"; throws kInvalidArgument otherwise.
Compression ParseCompression(std::string_view s);

// "auto"'s level for the data of one large file, measured on a sample of it (docs/format.md
// §12): zstd level 1 when its output is at most 1 % larger than level 3's (log files: as
// small or smaller, and about 1.5x faster), else level 3. A sample that looks incompressible
// or is shorter than kLevelTrialMin gives 3 (no trial).
inline constexpr size_t kLevelTrialMin = 64 * 1024;
// Only the first kLevelTrialMax bytes of a longer sample are tried.
inline constexpr size_t kLevelTrialMax = 1 << 20;
int ChooseAutoLevel(ByteView sample);

// One standard zstd frame with the content size recorded and no checksum.
Bytes ZstdCompress(ByteView data, int level);
// Compresses into out[offset, offset + n) and returns n; out only grows (reused per thread by
// callers) and afterwards holds at least `slack` bytes past the frame (room for a MAC).
size_t ZstdCompressInto(ByteView data, int level, Bytes& out, size_t offset = 0,
                        size_t slack = 0);
// The same into a HugeBuffer (grown to a power of two when too small, never zero-filled:
// only the pages a frame is written to are ever touched).
size_t ZstdCompressInto(ByteView data, int level, HugeBuffer& out, size_t offset, size_t slack);
// Compresses data given in pieces into one frame appended to `out` (used for large JSON
// files made piece by piece). The frame records no content size (it is not known in
// advance; every zstd decoder, restic's included, reads such frames). No checksum.
class ZstdStreamWriter {
 public:
  ZstdStreamWriter(int level, Bytes& out);
  ~ZstdStreamWriter();
  ZstdStreamWriter(const ZstdStreamWriter&) = delete;
  ZstdStreamWriter& operator=(const ZstdStreamWriter&) = delete;
  void Write(ByteView piece);
  // Ends the frame; nothing may be written after.
  void End();

 private:
  void Run(ByteView in, bool end);
  void* ctx_;  // ZSTD_CCtx
  Bytes& out_;
  Bytes block_;  // zstd's output block, appended to out_ as it fills
};

// Decompresses one frame. expected_size, when non-zero, must match exactly; the output
// is bounded by max_size to defend against hostile frames. Throws kCorrupt naming `what`.
Bytes ZstdDecompress(ByteView frame, size_t expected_size, size_t max_size,
                     std::string_view what);
// Decompresses a frame that must hold exactly out.size() bytes into out (caller memory,
// e.g. a reused buffer). Throws kCorrupt naming `what`.
void ZstdDecompressInto(ByteView frame, std::span<uint8_t> out, std::string_view what);
// The same into a string (JSON files: no second copy of a large index file).
std::string ZstdDecompressToString(ByteView frame, size_t max_size, std::string_view what);

// Decompresses one frame in pieces into the caller's buffer (a large index file is read
// through a small window instead of a buffer of its whole content). Read returns 0 at the
// end of the frame, throws kCorrupt naming `what` on a damaged frame or once the output
// exceeds max_size. clean() after the end: the frame ended exactly at the end of the
// input (otherwise the caller should fall back to ZstdDecompress, which decides).
class ZstdStreamReader {
 public:
  ZstdStreamReader(ByteView frame, size_t max_size, std::string_view what);
  ~ZstdStreamReader();
  ZstdStreamReader(const ZstdStreamReader&) = delete;
  ZstdStreamReader& operator=(const ZstdStreamReader&) = delete;
  size_t Read(uint8_t* dst, size_t cap);
  bool clean() const { return done_ && pos_ == frame_.size(); }

 private:
  void* ctx_;  // ZSTD_DCtx
  ByteView frame_;
  size_t pos_ = 0, total_ = 0, max_;
  bool done_ = false;
  std::string what_;
};

// True when a cheap sample suggests the data will not compress (random, already
// compressed). Used to store such blobs uncompressed, which the format allows.
bool LooksIncompressible(ByteView data);

}  // namespace haven
