// check: the repository's structure (index files load, every indexed pack exists with
// the indexed size, every snapshot's trees load and every referenced blob is indexed)
// and, with read_data, every pack's bytes (hash = name, header = index, every blob's
// MAC, size and id). Problems are collected, each naming the object; nothing is fixed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "repo/repository.h"

namespace haven {

struct CheckOptions {
  bool read_data = false;
  // Subset of packs to read: "n/m" (group n of m) or "x%"; empty = all.
  std::string read_data_subset;
  int jobs = 0;
  std::function<void(const std::string&)> progress;  // stage messages
};

struct CheckResult {
  std::vector<std::string> errors;
  std::vector<std::string> hints;  // not errors: unreferenced packs, duplicates
  uint64_t packs_read = 0;
  bool ok() const { return errors.empty(); }
};

// The repository must be open; the index is (re)loaded here.
CheckResult RunCheck(Repository& repo, const CheckOptions& opts);

// Reads one whole pack and checks it against its index entries. Returns the problems.
std::vector<std::string> CheckPackData(Repository& repo, const PackId& pack,
                                       const std::vector<PackedBlob>& indexed);

}  // namespace haven
