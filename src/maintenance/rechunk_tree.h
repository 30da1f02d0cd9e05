// copy between repositories whose chunker polynomials differ: the files under a source
// tree are cut again with the destination's chunker, so that the copy deduplicates with
// data backed up into the destination directly (restic 0.14 copies blobs as they are).
// Every file's content blobs are read from the source in order and streamed through the
// destination's chunker; each chunk is stored unless the destination has it. A directory
// whose files changed gets a new tree blob (its other fields as they were), so tree ids
// change up to the root. Trees and file contents seen before in this Rechunker (another
// snapshot of the same data, a duplicate file) are not read again.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "core/deep_stack.h"
#include "repo/indexed_repository.h"
#include "repo/write_session.h"

namespace haven {

class Rechunker {
 public:
  Rechunker(IndexedRepository& src, WriteSession& dst);

  // The destination tree for source tree `id` at `path` (for error messages). Throws
  // kCorrupt when a source tree cannot be re-encoded without losing information (a field
  // haven does not model) or is nested deeper than kMaxTreeDepth (a hostile source: one
  // recursion per level, run on a stack sized for that), and the source's errors for
  // missing or damaged blobs.
  BlobId Tree(const std::string& path, const BlobId& id);

  uint64_t chunks() const { return chunks_; }  // data blobs stored in the destination
  uint64_t bytes() const { return bytes_; }    // their plaintext bytes

 private:
  BlobId TreeAt(const std::string& path, const BlobId& id);
  std::vector<BlobId> Content(const std::vector<BlobId>& content);
  BlobId StoreChunk(ByteView chunk);

  IndexedRepository& src_;
  WriteSession& dst_;
  std::unordered_map<BlobId, BlobId, IdHash> trees_;                // source -> destination
  std::unordered_map<std::string, std::vector<BlobId>> contents_;  // raw source ids -> new
  uint64_t chunks_ = 0, bytes_ = 0;
  int depth_ = 0;  // of the tree being re-chunked (TreeLevel)
};

}  // namespace haven
