// Pack files (docs/format.md §7): sealed blobs back to back, then the sealed header listing
// them, then the header length as uint32 LE. PackWriter builds one pack in memory
// (StreamedPackWriter, repo/pack_stream.h, writes one to its backend as it fills);
// ParsePackHeader reads the header of an existing pack.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/id.h"
#include "crypto/crypto_key.h"

namespace haven {

enum class BlobType : uint8_t { kData = 0, kTree = 1 };
const char* BlobTypeName(BlobType t);  // "data" / "tree"

// One blob inside a pack. uncompressed_length == 0 means stored uncompressed.
struct PackedBlob {
  BlobType type;
  BlobId id;
  uint32_t offset = 0;
  uint32_t length = 0;  // sealed bytes in the pack
  uint32_t uncompressed_length = 0;

  uint32_t PlainLength() const {
    return uncompressed_length ? uncompressed_length : length - 32;
  }
};

constexpr uint32_t kMaxHeaderSize = 16 * 1024 * 1024;
constexpr size_t kEntrySizeUncompressed = 37;
constexpr size_t kEntrySizeCompressed = 41;

class PackWriter {
 public:
  // reserve: bytes to allocate at the first Add (the expected pack size; 0 = grow).
  // buffer: an emptied pack buffer to reuse (its capacity is kept).
  explicit PackWriter(BlobType type, size_t reserve = 0, Bytes buffer = {})
      : type_(type), reserve_(reserve), data_(std::move(buffer)) {
    data_.clear();
  }
  BlobType type() const { return type_; }
  // Appends an already sealed blob; `uncompressed_length` is 0 for uncompressed blobs.
  void Add(const BlobId& id, ByteView sealed, uint32_t uncompressed_length);
  size_t Size() const { return data_.size(); }
  size_t Count() const { return blobs_.size(); }
  // Appends the sealed header and its length. Returns the full pack file bytes and
  // leaves the writer empty.
  Bytes Finish(const crypto::CryptoKey& key, std::vector<PackedBlob>* blobs);

 private:
  BlobType type_;
  size_t reserve_;
  Bytes data_;
  std::vector<PackedBlob> blobs_;
};

// The tail of a pack holding `blobs`: the sealed header, then its length (uint32 LE).
Bytes SealedPackTail(const crypto::CryptoKey& key, const std::vector<PackedBlob>& blobs);

// Size of the tail (sealed header + 4) for a list of entries.
uint64_t PackHeaderSize(const std::vector<PackedBlob>& blobs);

// Parses the plaintext header entries; offsets are computed from the lengths.
// Throws kCorrupt naming `pack` on an invalid entry.
std::vector<PackedBlob> ParseHeaderEntries(ByteView plain, const std::string& pack);

// Reads and checks the header of a pack given its tail: `tail` must be the last
// `tail.size()` bytes of a file of `file_size` bytes. Returns the number of tail bytes
// needed if tail is too short (in *need), otherwise the entries. Validates header
// length bounds, the MAC, entry types and that blobs fit before the header.
std::vector<PackedBlob> ParsePackHeader(const crypto::CryptoKey& key, ByteView tail,
                                        uint64_t file_size, const std::string& pack,
                                        uint64_t* need);

}  // namespace haven
