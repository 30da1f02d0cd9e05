// The in-memory master index: where every (blob type, blob id) lives. Built from the
// repository's index files (docs/format.md §8) and extended as new packs are written.
// Sorted packed records sharded by the id's first byte (ids are SHA-256, so uniform):
// 47 bytes per blob plus ~1 KiB per shard, loaded in parallel (the design budget: <= 48 bytes
// per blob). Equality compares all 32 bytes and the type. A key may have several
// locations (duplicates).
//
// Thread safety: const methods may run concurrently; AddPack needs exclusive access
// (Repository guards it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/huge_buffer.h"
#include "core/id.h"
#include "repo/pack.h"

namespace haven {

struct BlobLocation {
  PackId pack;
  uint32_t offset;
  uint32_t length;
  uint32_t uncompressed_length;
  uint32_t PlainLength() const { return uncompressed_length ? uncompressed_length : length - 32; }
  bool operator==(const BlobLocation&) const = default;
};

// A blob and where it is stored, known without reading the index from a trusted local
// record (a folder state, archiver/folder_state.h; IndexedRepository::AddKnownBlobs).
struct KnownBlob {
  BlobType type;
  BlobId id;
  BlobLocation where;
  bool operator==(const KnownBlob&) const = default;
};

class Index {
 public:
  Index();
  ~Index();
  Index(Index&&) noexcept;
  Index& operator=(Index&&) noexcept;

  // Adds every blob of a pack. The pack's entries should all be added at once.
  void AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs);
  // One index file's JSON for LoadParallel: `read` streams it in pieces (fills up to cap
  // bytes, 0 at the end); `whole` returns the complete text, called only when the fast
  // scanner gives up (the general parser needs it whole, and names the errors).
  struct FileText {
    std::function<size_t(char* dst, size_t cap)> read;
    std::function<std::string()> whole;
    // Optional, asked after `read` ended: false sends the file to the general parser
    // even though the streamed text scanned cleanly (e.g. bytes after a zstd frame).
    std::function<bool()> complete;
    std::string name;  // for messages
  };
  using ParseFn = std::function<void(FileText&)>;
  // Fills an empty index from `files` index files on up to `threads` threads: open(i,
  // parse) is called once per file, from any thread, and calls parse(text) once with the
  // file's text. Rethrows the first error (of open or of parsing). Each file is parsed
  // into a compact per-file array (47 bytes per blob, grouped by shard); at the end the
  // shards are allocated at their exact sizes and filled file by file, each file's array
  // freed once copied, so the load never holds much more than the index itself.
  void LoadParallel(size_t files, int threads,
                    const std::function<void(size_t, const ParseFn&)>& open);

  bool Has(BlobType type, const BlobId& id) const;
  // All locations of a blob (empty when unknown), in the order they were added.
  std::vector<BlobLocation> Lookup(BlobType type, const BlobId& id) const;
  size_t BlobCount() const { return count_; }
  size_t PackCount() const { return packs_.size(); }
  bool HasPack(const PackId& pack) const { return pack_pos_.contains(pack); }
  // Calls fn for every indexed blob (data blobs, then trees; by id within a type).
  void ForEach(const std::function<void(const PackId&, const PackedBlob&)>& fn) const;
  // True when `pack` is indexed and its first blob is a tree (a "tree pack").
  bool IsTreePack(const PackId& pack) const { return tree_packs_.contains(pack); }
  // Heap bytes held (records, tables, pack ids): for benchmarks and tests.
  size_t MemoryUsage() const;

  // Positions: after Compact (and until the next AddPack) every entry of a type has a
  // stable position in [0, Positions(type)), in id order, so callers can keep per-blob
  // state in flat arrays (prune's used-blob bitmap) instead of sets of ids.
  static constexpr size_t npos = static_cast<size_t>(-1);
  void Compact();
  size_t Positions(BlobType type) const { return positions_[static_cast<int>(type)]; }
  // Position of the first entry of (type, id), or npos. Requires Compact.
  size_t Find(BlobType type, const BlobId& id) const;
  // Find for n ids at once (out[i] = Find(type, ids[i])), with the memory accesses of
  // several lookups overlapped: faster for the batches of a tree's content.
  void FindMany(BlobType type, const BlobId* ids, size_t n, size_t* out) const;
  // The entry at a position, with its pack number (see PackAt) and the position of the
  // first entry with the same id (the one Find returns; duplicates are adjacent).
  PackedBlob EntryAt(BlobType type, size_t pos, uint32_t* pack_no, size_t* first = nullptr) const;
  const PackId& PackAt(uint32_t pack_no) const { return packs_[pack_no]; }
  // fn(type, pos, first, pack_no, blob) for every entry in position order; `first` is the
  // position of the first entry with the same id (duplicates are adjacent).
  void ForEachPosition(
      const std::function<void(BlobType, size_t pos, size_t first, uint32_t pack_no,
                               const PackedBlob&)>& fn) const;

 private:
  // Entries live in 512 shards, one per (type, first id byte), as packed 47-byte records
  // (id bytes 1..31, pack number, offset, length, uncompressed length): a sorted run
  // with a 257-entry table over the second id byte, plus a short unsorted tail that
  // AddPack appends to and merges in once it grows.
  struct Shard;
  Shard& ShardOf(BlobType type, const BlobId& id) const;
  uint32_t RegisterPack(const PackId& pack, bool tree_pack);

  // LoadParallel's shard records, in one 2 MiB-aligned mapping (core/huge_buffer.h: huge
  // pages only where the system's THP setting is `always`); declared before shards_:
  // freed last.
  std::unique_ptr<HugeBuffer> arena_;
  std::unique_ptr<Shard[]> shards_;  // 512
  std::vector<size_t> base_ = std::vector<size_t>(512, 0);  // first position per shard (Compact)
  size_t positions_[2] = {0, 0};
  size_t count_ = 0;
  std::vector<PackId> packs_;
  std::unordered_map<PackId, uint32_t, IdHash> pack_pos_;  // first number of each pack
  std::unordered_set<PackId, IdHash> tree_packs_;
};

// One index file's content (docs/format.md §8).
struct IndexFile {
  struct Pack {
    PackId id;
    std::vector<PackedBlob> blobs;
  };
  std::vector<Pack> packs;
  std::vector<RawId> supersedes;

  // Compact JSON with a trailing newline, as restic writes it (supersedes omitted).
  std::string ToJson() const;
  // The same text in consecutive pieces of about 64 KiB (index writers compress them as
  // they come: a 50,000-blob index is ~10 MB of JSON never held whole).
  void EmitJson(const std::function<void(std::string_view)>& put) const;
  // One pack's object, {"id":...,"blobs":[...]}, appended to `out` as ToJson writes it.
  static void AppendPackJson(std::string& out, const PackId& id,
                             const std::vector<PackedBlob>& blobs);
  // Accepts the object form and the old array form. Throws kCorrupt naming `name`.
  static IndexFile Parse(std::string_view json, std::string_view name);
};

// An index file's JSON over `packs` packs, the k-th appended by append_pack(out, k), handed
// to `put` in pieces of about 64 KiB (IndexFile::EmitJson; prune's index rewrite, which
// lists packs of its pack table without copying them into an IndexFile).
void EmitIndexJson(size_t packs, const std::function<void(std::string&, size_t)>& append_pack,
                   const std::function<void(std::string_view)>& put);

}  // namespace haven
