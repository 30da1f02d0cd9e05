// restic's content-defined chunker (docs/format.md §11): a Rabin fingerprint over a 64-byte window
// cuts where its low 20 bits are zero, with chunks of 512 KiB .. 8 MiB. Boundaries are
// identical to restic's for the same polynomial, so blobs deduplicate with restic.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bytes.h"

namespace haven::chunker {

constexpr size_t kMinSize = 512 * 1024;
constexpr size_t kMaxSize = 8 * 1024 * 1024;
constexpr size_t kWindowSize = 64;
constexpr uint64_t kSplitMask = (1 << 20) - 1;

// Precomputed sliding tables for one polynomial. Immutable; safe to share between threads.
class Tables {
 public:
  // Requires 8 <= Degree(polynomial) <= 53 (throws Error(kInvalidArgument) otherwise).
  // Irreducibility is the caller's business (the repository config checks it).
  explicit Tables(uint64_t polynomial);

  uint64_t polynomial() const { return polynomial_; }

  // The digest after byte `in` enters the window and byte `out` (64 bytes older) leaves it.
  uint64_t Slide(uint64_t digest, uint8_t out, uint8_t in) const {
    digest ^= out_[out];
    return ((digest << 8) | in) ^ mod_[digest >> shift_];
  }

  // Fingerprint of the window ending at window.end() (its last 64 bytes, fewer if shorter; a
  // shorter window counts as zero-padded on the old side). Slow path for tests and checks.
  uint64_t Fingerprint(ByteView window) const;

  // The raw tables, for the scanning loops (each computes what Slide does).
  const uint64_t* out_table() const { return out_.data(); }
  const uint64_t* mod_table() const { return mod_.data(); }
  int shift() const { return shift_; }

 private:
  std::array<uint64_t, 256> out_;  // b·x^(8·63) mod P: removes the byte leaving the window
  std::array<uint64_t, 256> mod_;  // (b·x^deg mod P) | b << deg: reduces after a shift by 8
  uint64_t polynomial_;
  int shift_;  // deg - 8
};

// Streaming chunker: feed a file's bytes in pieces of any size. Single-threaded.
class Chunker {
 public:
  // `t` must outlive the chunker.
  explicit Chunker(const Tables& t);

  // Continues the current chunk with `data`. If a boundary falls inside data, returns the number
  // of bytes of `data` that end the current chunk (1..data.size()) and resets for the next
  // chunk; the caller then calls Next again with the rest. Returns std::nullopt if every byte of
  // data belongs to the current (unfinished) chunk. At end of input, a nonzero chunk_length()
  // is the last (short) chunk.
  std::optional<size_t> Next(ByteView data);

  // Starts a new chunk (forgets the bytes of the current one).
  void Reset();

  // Bytes in the current unfinished chunk.
  uint64_t chunk_length() const { return count_; }

 private:
  const Tables* t_;
  uint64_t count_ = 0;
  uint64_t digest_ = 0;
  std::array<uint8_t, kWindowSize> window_{};  // last hashed bytes; window_[wpos_] is oldest
  size_t wpos_ = 0;
};

// All chunk lengths of a complete buffer (last chunk may be short; empty input -> no chunks).
std::vector<size_t> ChunkLengths(const Tables& t, ByteView all);

// Consecutive cut candidates: every end position p in [first, last].
struct CandidateRun {
  size_t first;
  size_t last;
  bool operator==(const CandidateRun&) const = default;
};

// Every cut candidate: each end position p (from <= p <= all.size(), p >= 64) whose window
// all[p-64, p) has a fingerprint matching kSplitMask, ascending and merged into maximal runs
// (a run of zeros is one run, not one entry per byte). Scans up to `threads` segments
// concurrently (threads < 1 counts as 1).
std::vector<CandidateRun> CutCandidates(const Tables& t, ByteView all, size_t from, int threads);

// Same result as ChunkLengths, computed as the parallel chunker design: candidates found on `threads` threads,
// then one serial pass picks the first candidate at or after start+kMinSize, else
// start+kMaxSize. threads <= 1 runs ChunkLengths.
std::vector<size_t> ChunkLengthsParallel(const Tables& t, ByteView all, int threads);

}  // namespace haven::chunker
