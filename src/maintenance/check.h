// check: the repository's structure (index files load, every indexed pack exists with
// the indexed size, every snapshot's trees load and every referenced blob is indexed)
// and, with read_data, every pack's bytes (hash = name, header = index, every blob's
// MAC, size and id). Problems are collected, each naming the object; nothing is fixed.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/huge_buffer.h"
#include "repo/repository.h"

namespace haven {

class CheckHeadStart;
class IndexedRepository;

struct CheckOptions {
  bool read_data = false;
  // Subset of packs to read: "n/m" (group n of m), "x%" or a size ("50M": random packs
  // whose count is that share of the packs' total bytes); empty = all.
  std::string read_data_subset;
  int jobs = 0;  // 0: the CPUs, and loads at least the backend's Connections()
  std::function<void(const std::string&)> progress;  // stage messages
  // Called once the snapshots are listed, before anything is reported: confirms a lock
  // taken with Lock::AcquireOverlapped (its check ran beside the first listings).
  std::function<void()> confirm_lock;
  // The repository is locked exclusively (no backup can add an index file and then a
  // snapshot meanwhile): the index loads while the snapshots are listed.
  bool locked_exclusively = false;
  // Work begun before the lock was written (check_head_start.h), used when locked
  // exclusively; it must outlive RunCheck.
  CheckHeadStart* head_start = nullptr;
};

struct CheckResult {
  std::vector<std::string> errors;
  std::vector<std::string> hints;  // not errors: unreferenced packs, duplicates
  uint64_t packs_read = 0;
  bool ok() const { return errors.empty(); }
};

// The repository must be open; the index is (re)loaded here.
CheckResult RunCheck(Repository& repo, const CheckOptions& opts);

// How many packs a check reads at once: --jobs, or by default at least as many as the
// storage serves (S3: 5).
int CheckLoaders(const Backend& be, int jobs);

// The index's packs: pack id -> its entries, entries listed by several index files merged
// (a hint for each such pack is added to `hints`, when given).
std::map<PackId, std::vector<PackedBlob>> PacksOfIndex(IndexedRepository& repo,
                                                       std::vector<std::string>* hints);

// Buffers of one CheckPackData caller (a worker thread), reused across packs; they only
// grow: to the largest segment (about 2 * segment plus one blob) and the largest blob.
struct PackCheckBuffers {
  HugeBuffer window;   // the segment of the pack being checked
  HugeBuffer out;      // one blob's decompressed plaintext
  HugeBuffer scratch;  // a header longer than the last segment, a blob overlapping another
};

// Packs are checked in segments of about this size, extended to end on a blob boundary
// (a pack of up to twice the size is one segment): small enough that each blob is still in
// the CPU cache when it is opened after the hash. From a disk each segment is one read;
// from storage where every request is a round trip (Backend::RoundTrips) the whole pack is
// one streamed request (Backend::LoadStream) whose bytes fill the same segments as they
// arrive. (Before streaming, one request per segment measured over S3 with 25 ms each way,
// R4 in bench/RESULTS.md 2026-12-02: 1 MiB segments 0.92 of restic's time, 4 MiB 0.74-0.76,
// a whole pack in one buffered GET 0.82-0.86 with 50 MiB more peak RSS.)
inline constexpr uint64_t kCheckSegment = 1 << 20;

// Reads one pack of `size` bytes (as listed) once and checks it against its index
// entries: the SHA-256 of all bytes equals the pack id, the header parses and equals
// the index entries, and every indexed blob opens, decompresses and hashes to its id.
// Returns the problems, each naming the pack (and the blob). `segment` is for tests;
// `stream`: the pack is read in one request (Backend::LoadStream), else segment by segment.
std::vector<std::string> CheckPackData(Repository& repo, const PackId& pack, uint64_t size,
                                       const std::vector<PackedBlob>& indexed,
                                       PackCheckBuffers& bufs,
                                       uint64_t segment = kCheckSegment, bool stream = false);

// What is wrong with the names of one tree's nodes: unsafe names (see SafeNodeName),
// repeated names (restore refuses them: a symlink and a directory of one name would lead
// a restore outside its target).
std::vector<std::string> TreeNameErrors(const std::vector<Node>& nodes);

}  // namespace haven
