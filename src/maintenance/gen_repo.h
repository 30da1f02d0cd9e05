// A generator of large synthetic repositories for benchmarks and tests (`haven debug
// gen-repo`): real restic trees with real file nodes, small random data blobs, many
// snapshots, all written through a WriteSession (packers and index writer), so restic reads
// the result like any other repository.
//
// Shape: snapshot 0 holds `dirs` leaf directories (under two levels of 64-way fan-out
// parents), each with `files` files of `blobs_per_file` data blobs of `blob_size` random
// bytes. Every later snapshot gives one file in each of `changed_dirs` leaf directories
// new content (new data blobs, a new leaf tree and new parents). Everything logical
// (blob ids, tree ids, snapshot content) is a function of `seed`; only the encryption
// nonces, hence pack and index file names, differ between runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "repo/indexed_repository.h"
#include "repo/write_session.h"

namespace haven {

struct GenRepoOptions {
  uint64_t seed = 1;
  uint32_t dirs = 200000;
  uint32_t files = 5;
  uint32_t blobs_per_file = 5;
  uint32_t blob_size = 48;
  uint32_t snapshots = 10;
  uint32_t changed_dirs = 5000;  // per snapshot after the first
  int threads = 0;               // 0: repo.threads()
  WriteOptions write;            // pack size (compression is always off: random data)
  std::function<void(const std::string&)> progress;
};

struct GenRepoResult {
  uint64_t data_blobs = 0, tree_blobs = 0, snapshots = 0;
};

GenRepoResult GenerateRepository(IndexedRepository& repo, const GenRepoOptions& opts);

// A snapshot of one chain of `depth` directories named "d" below its root, ending in a
// file "leaf" holding "leaf\n" (`haven debug gen-deep`): the shape of a hostile repository,
// for the tests that every tree walker refuses to recurse past kMaxTreeDepth. Returns the
// snapshot's id.
FileId GenerateDeepChain(IndexedRepository& repo, uint32_t depth, const WriteOptions& write);

}  // namespace haven
