// Typed 32-byte ids. Every id in the repository is a SHA-256: of a blob's plaintext
// (BlobId), or of a stored file's bytes (PackId for packs, FileId for the unpacked files:
// snapshots, index files, keys and locks).
// Distinct types keep a pack id from being used where a blob id is meant.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/bytes.h"

namespace haven {

struct RawId {
  std::array<uint8_t, 32> bytes{};

  auto operator<=>(const RawId&) const = default;
  bool IsZero() const {
    for (uint8_t b : bytes)
      if (b) return false;
    return true;
  }
  std::string Hex() const { return HexEncode(bytes); }
  std::string Short() const { return Hex().substr(0, 8); }
  // The first 8 bytes: SHA-256 output is uniform, so this is already a good hash.
  uint64_t Prefix64() const {
    uint64_t v;
    std::memcpy(&v, bytes.data(), 8);
    return v;
  }
  static std::optional<RawId> FromHex(std::string_view hex) {
    RawId id;
    if (!HexDecodeInto(hex, id.bytes.data(), 32)) return std::nullopt;
    return id;
  }
};

template <typename Tag>
struct TypedId : RawId {
  TypedId() = default;
  explicit TypedId(const RawId& r) : RawId(r) {}
  static std::optional<TypedId> FromHex(std::string_view hex) {
    auto r = RawId::FromHex(hex);
    if (!r) return std::nullopt;
    return TypedId(*r);
  }
  auto operator<=>(const TypedId&) const = default;
};

using BlobId = TypedId<struct BlobTag>;
using PackId = TypedId<struct PackTag>;
using FileId = TypedId<struct FileTag>;  // storage id of an unpacked file (snapshot, index, key, lock)

// SHA-256 of a byte range (OpenSSL, SHA-NI where available).
RawId Sha256(ByteView data);

struct IdHash {
  size_t operator()(const RawId& id) const { return id.Prefix64(); }
};

}  // namespace haven
