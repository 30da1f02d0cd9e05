// restic 0.16's `repair packs ID...` (cmd/restic/cmd_repair_packs.go): a copy of each named
// pack is written to `backup_dir` as pack-<id>; every blob the index lists in those packs
// is read from the pack (or, when that copy is damaged, from any other copy the index
// knows) and saved again into new packs; the index is rewritten without the named packs,
// and the packs are removed. A blob with no intact copy is lost (warned about): the
// snapshots that use it then need `repair snapshots --forget`. The caller holds the
// exclusive lock.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "repo/indexed_repository.h"
#include "repo/write_session.h"

namespace haven {

struct RepairPacksOptions {
  std::string backup_dir = ".";  // restic: the current folder
  int threads = 1;
  std::function<void(const std::string&)> warn;      // per-blob and per-pack problems
  std::function<void(const std::string&)> progress;  // restic's stage lines
};

struct RepairPacksResult {
  size_t salvaged = 0;  // blobs saved again
  size_t lost = 0;      // blobs without an intact copy
  size_t index_files_written = 0, index_files_removed = 0;
};

// Throws haven::Error when a backup copy cannot be written (nothing changed yet) or a
// save, the index rewrite or a removal fails.
RepairPacksResult RepairPacks(IndexedRepository& repo, WriteSession& session,
                              const std::vector<PackId>& packs, const RepairPacksOptions& opts);

}  // namespace haven
