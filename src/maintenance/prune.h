// prune with restic 0.14's semantics (docs/architecture.md §6a, cmd/restic/cmd_prune.go v0.14.0):
// find the blobs every snapshot still uses, classify each pack (keep, repack, remove,
// unreferenced), then delete unreferenced packs, copy the still-used blobs out of the
// packs chosen for repacking into new packs (new packs + their index first), write a
// complete new index, delete the old index files and finally the removed packs. Each
// step leaves a repository that `check` accepts, so an interrupted prune loses nothing
// and a second run finishes the job.
//
// The caller holds an exclusive lock. Prune refuses (throws, nothing deleted) when an
// index file cannot be loaded, a snapshot or tree cannot be loaded, a used blob is not in
// the index, an indexed pack holding used blobs is missing, or such a pack's size differs
// from what the index describes.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/id.h"
#include "maintenance/used_blobs.h"
#include "repo/early_index.h"
#include "repo/indexed_repository.h"
#include "repo/repository.h"
#include "repo/write_session.h"

namespace haven {

// Prune removes `*-tmp-*` files (left by a killed writer) older than this.
constexpr int64_t kStaleTempAge = 24 * 60 * 60;

struct PruneOptions {
  std::string max_unused = "5%";  // "unlimited", "N%" (0 <= N < 100) or a size ("10M")
  std::string max_repack_size;    // a size; "" = unlimited
  bool repack_cacheable_only = false;
  bool repack_small = false;         // repack packs below 80 % of the target size
  bool repack_uncompressed = false;  // v2: repack (and compress) uncompressed packs
  bool dry_run = false;
  int jobs = 0;  // 0: repo.threads() (the used-blob walk: at least the backend's Connections())
  // Snapshots to plan without, as if they were gone (restic's ignoreSnapshots: `forget
  // --prune --dry-run` plans the prune after the snapshots it would remove).
  std::set<FileId> ignore_snapshots;
  // Eventually consistent storage (RELIABILITY.md case 19): a pack in no index that the
  // storage got less than this many seconds ago is kept, since its index file may simply not
  // be listed yet. Ages are taken by the storage's clock (a probe lock's modification time
  // against the pack's); a backend that keeps no modification times keeps every such pack
  // while this is > 0. 0 (the default, restic's behaviour): unreferenced packs go at once.
  int64_t unreferenced_grace = 0;
  WriteOptions write;  // pack size (the small-pack limit) and compression of repacked packs
  std::function<void(const std::string&)> progress;  // stage messages ("repacking packs")
  std::function<void(const std::string&)> warn;      // non-fatal problems
  // Called once the index is loaded, before anything is planned, reported or written:
  // confirms a lock taken with Lock::AcquireOverlapped (its check ran beside the loads).
  std::function<void()> confirm_lock;
  // The index loaded before the lock (StartEarlyIndex), taken when the index files listed
  // under the lock are those it loaded; may be null.
  EarlyIndex* early_index = nullptr;
};

struct PruneStats {
  struct {
    uint64_t used = 0, duplicate = 0, unused = 0, remove = 0, repack = 0, repackrm = 0;
  } blobs;
  struct {
    uint64_t used = 0, duplicate = 0, unused = 0, remove = 0, repack = 0, repackrm = 0,
             unref = 0;
  } size;
  struct {
    uint64_t used = 0, unused = 0, partly_used = 0, unref = 0, keep = 0, repack = 0,
             remove = 0;
  } packs;
};

struct PrunePlan {
  std::vector<PackId> remove_first;  // on storage but in no index: deleted first
  std::vector<PackId> repack;        // still-used blobs are copied out, then deleted
  std::vector<PackId> remove;        // no used blob: deleted
  std::vector<PackId> ignore;        // indexed, missing, unused: dropped from the index
  std::vector<PackId> young;         // in no index but younger than unreferenced_grace: kept
  BlobSets keep;                     // blobs to copy out of `repack` (not kept elsewhere)
  // Some pack is listed by several index files (left by an interrupted prune or repair):
  // the index is rewritten even when no pack goes.
  bool rewrite_index = false;
  PruneStats stats;
};

struct PruneResult {
  PrunePlan plan;
  uint64_t packs_written = 0;  // by repacking
  uint64_t index_files_written = 0, index_files_removed = 0;
  uint64_t remove_failures = 0;  // packs that could not be deleted (warned)
  uint64_t stale_temp_removed = 0;  // `*-tmp-*` files of killed writers, older than a day
};

// restic's size syntax: digits with an optional b/k/m/g/t suffix (powers of 1024).
uint64_t ParsePruneSize(const std::string& s, const std::string& what);
// --max-unused: the allowed unused bytes after prune for `used` bytes in use.
std::function<uint64_t(uint64_t used)> ParseMaxUnused(const std::string& s);

// `--unreferenced-grace`: a restic duration ("2h", "1d", "1y2m"; a month counts 30 days, a
// year 365) in seconds; "" is 0. Throws kInvalidArgument naming the flag when invalid or
// negative.
int64_t ParseUnreferencedGrace(const std::string& s);

// Loads all snapshots, finds the used blobs and decides. Changes nothing.
PrunePlan PlanPrune(IndexedRepository& repo, const PruneOptions& opts);
// Carries out a plan made by PlanPrune on the same repository object (repacking through a
// WriteSession of its own).
PruneResult ExecutePrune(IndexedRepository& repo, PrunePlan plan, const PruneOptions& opts);
// Checks the options, loads the index (IndexedRepository::Load), PlanPrune, then (unless
// dry_run) ExecutePrune. `on_plan` (optional) sees the plan before anything is changed (the
// CLI prints the statistics there).
PruneResult RunPrune(Repository& repo, const PruneOptions& opts,
                     const std::function<void(const PrunePlan&)>& on_plan = {});

}  // namespace haven
