// repair index (restic 0.14 `rebuild-index`, 0.16+ `repair index`): builds a new index
// from the pack files. Packs the old index describes with the right size are trusted
// (unless read_all_packs); the headers of all other packs are read. Packs whose header
// cannot be read are left out (they remain on storage; prune deletes them). The new
// index files are written first, then every old index file is deleted, so an interrupted
// repair leaves a usable repository.
//
// The caller holds an exclusive lock. An index file that fails its integrity check is
// dropped with a warning; an I/O error aborts before anything is written or deleted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "repo/repository.h"

namespace haven {

struct RepairIndexOptions {
  bool read_all_packs = false;
  int jobs = 0;  // 0: repo.threads()
  std::function<void(const std::string&)> progress;
  std::function<void(const std::string&)> warn;
};

struct RepairIndexResult {
  uint64_t packs_trusted = 0;   // taken from the old index
  uint64_t packs_read = 0;      // headers read and indexed
  uint64_t packs_invalid = 0;   // header unreadable: left out
  uint64_t packs_forgotten = 0; // in the old index but not on storage
  uint64_t invalid_index_files = 0;
  uint64_t index_files_written = 0, index_files_removed = 0;
};

RepairIndexResult RepairIndex(Repository& repo, const RepairIndexOptions& opts);

// Reads and parses the header of one pack of `size` bytes (speculative tail read, then
// exactly the header if it is larger). Throws kCorrupt for an invalid header.
std::vector<PackedBlob> ReadPackHeader(Repository& repo, const PackId& pack, uint64_t size);

}  // namespace haven
