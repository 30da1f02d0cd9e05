// The in-memory master index: where every (blob type, blob id) lives. Built from the
// repository's index files (FORMAT.md §8) and extended as new packs are written.
// Open addressing on the id's first 8 bytes (ids are SHA-256, so uniform); equality
// compares all 32 bytes and the type. A key may have several locations (duplicates).
//
// Thread safety: none; Repository guards it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/id.h"
#include "repo/pack.h"

namespace haven {

struct BlobLocation {
  PackId pack;
  uint32_t offset;
  uint32_t length;
  uint32_t uncompressed_length;
  uint32_t PlainLength() const { return uncompressed_length ? uncompressed_length : length - 32; }
};

class Index {
 public:
  // Adds every blob of a pack. The pack's entries should all be added at once.
  void AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs);
  bool Has(BlobType type, const BlobId& id) const;
  // All locations of a blob (empty when unknown).
  std::vector<BlobLocation> Lookup(BlobType type, const BlobId& id) const;
  size_t BlobCount() const { return entries_.size(); }
  size_t PackCount() const { return packs_.size(); }
  bool HasPack(const PackId& pack) const;
  // Calls fn for every indexed blob (pack order, then entry order).
  void ForEach(const std::function<void(const PackId&, const PackedBlob&)>& fn) const;
  // The blobs of one pack as indexed (empty when the pack is not indexed).
  std::vector<PackedBlob> PackBlobs(const PackId& pack) const;
  // True when `pack` is indexed and its first blob is a tree (a "tree pack").
  bool IsTreePack(const PackId& pack) const { return tree_packs_.contains(pack); }

 private:
  struct Entry {
    BlobId id;
    uint32_t pack;
    uint32_t offset;
    uint32_t length;
    uint32_t uncompressed_length;
    BlobType type;
  };
  size_t Slot(BlobType type, const BlobId& id) const;
  void Grow();
  void Insert(uint32_t entry);

  std::vector<PackId> packs_;
  std::vector<uint32_t> pack_first_;  // first entry of each pack (entries are grouped)
  std::vector<Entry> entries_;
  std::vector<uint32_t> table_;  // entry index + 1; 0 = empty
  std::unordered_set<PackId, IdHash> tree_packs_;
};

// One index file's content (FORMAT.md §8.1).
struct IndexFile {
  struct Pack {
    PackId id;
    std::vector<PackedBlob> blobs;
  };
  std::vector<Pack> packs;
  std::vector<RawId> supersedes;

  // Compact JSON with a trailing newline, as restic writes it (supersedes omitted).
  std::string ToJson() const;
  // Accepts the object form and the old array form. Throws kCorrupt naming `name`.
  static IndexFile Parse(std::string_view json, std::string_view name);
};

}  // namespace haven
