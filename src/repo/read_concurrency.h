// How many small repository files (index, snapshots) to read at once. Each read is one
// round trip to remote storage, so when most of them must come from the storage (cold
// local cache, --no-cache) many are requested at once and the latency overlaps; when the
// local cache holds most of them, a few readers are enough (a disk read, no round trip)
// and more threads would only compete with the parsing for the CPU. The storage's own
// connection limit (e.g. s3.connections) still bounds what is really in flight.
#pragma once

#include <cstddef>
#include <vector>

#include "core/id.h"
#include "repo/repository.h"

namespace haven {

inline constexpr int kColdReaders = 32;  // at most, when most files come from the storage
inline constexpr int kWarmReaders = 4;   // most files are in the local cache

// When more than half of `ids` (files of type t) have no copy in the local cache (or there
// is no cache): 4 per connection the storage serves, between kWarmReaders and kColdReaders
// (S3 at its default 5 connections: 20, of which 5 on the wire at once; a local folder: 8);
// else kWarmReaders. Never more than ids.size() (and >= 1).
int ReadConcurrency(const Repository& repo, FileType t, const std::vector<FileId>& ids);

}  // namespace haven
