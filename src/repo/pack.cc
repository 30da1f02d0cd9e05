#include "repo/pack.h"

#include <cstring>

#include "core/error.h"
#include "crypto/seal.h"

namespace haven {

const char* BlobTypeName(BlobType t) { return t == BlobType::kTree ? "tree" : "data"; }

void PackWriter::Add(const BlobId& id, ByteView sealed, uint32_t uncompressed_length) {
  PackedBlob b{type_, id, static_cast<uint32_t>(data_.size()),
               static_cast<uint32_t>(sealed.size()), uncompressed_length};
  // Room for a whole pack at once: growing by doubling copied every pack ~twice.
  if (data_.capacity() < reserve_) data_.reserve(reserve_);
  data_.insert(data_.end(), sealed.begin(), sealed.end());
  blobs_.push_back(b);
}

Bytes SealedPackTail(const crypto::CryptoKey& key, const std::vector<PackedBlob>& blobs) {
  Bytes header;
  header.reserve(blobs.size() * kEntrySizeCompressed);
  for (const PackedBlob& b : blobs) {
    uint8_t t = static_cast<uint8_t>(b.type) + (b.uncompressed_length ? 2 : 0);
    header.push_back(t);
    PutU32Le(header, b.length);
    if (b.uncompressed_length) PutU32Le(header, b.uncompressed_length);
    header.insert(header.end(), b.id.bytes.begin(), b.id.bytes.end());
  }
  Bytes tail(header.size() + crypto::kOverhead);
  crypto::SealInto(key, header, tail.data());
  PutU32Le(tail, static_cast<uint32_t>(header.size() + crypto::kOverhead));
  return tail;
}

Bytes PackWriter::Finish(const crypto::CryptoKey& key, std::vector<PackedBlob>* blobs) {
  Bytes tail = SealedPackTail(key, blobs_);
  Bytes out = std::move(data_);
  out.insert(out.end(), tail.begin(), tail.end());
  *blobs = std::move(blobs_);
  data_.clear();
  blobs_.clear();
  return out;
}

uint64_t PackHeaderSize(const std::vector<PackedBlob>& blobs) {
  uint64_t n = crypto::kOverhead + 4;
  for (const PackedBlob& b : blobs)
    n += b.uncompressed_length ? kEntrySizeCompressed : kEntrySizeUncompressed;
  return n;
}

std::vector<PackedBlob> ParseHeaderEntries(ByteView plain, const std::string& pack) {
  std::vector<PackedBlob> out;
  size_t pos = 0;
  uint64_t offset = 0;
  while (pos < plain.size()) {
    uint8_t t = plain[pos];
    if (t > 3)
      Fail(ErrorCode::kCorrupt, "pack " + pack + ": invalid header entry type " +
                                    std::to_string(t) + " at offset " + std::to_string(pos));
    size_t need = t >= 2 ? kEntrySizeCompressed : kEntrySizeUncompressed;
    if (pos + need > plain.size())
      Fail(ErrorCode::kCorrupt, "pack " + pack + ": truncated header entry");
    PackedBlob b;
    b.type = (t & 1) ? BlobType::kTree : BlobType::kData;
    b.length = GetU32Le(&plain[pos + 1]);
    size_t idpos = pos + 5;
    if (t >= 2) {
      b.uncompressed_length = GetU32Le(&plain[pos + 5]);
      idpos += 4;
      if (b.uncompressed_length == 0)
        Fail(ErrorCode::kCorrupt, "pack " + pack + ": compressed entry with zero length");
    }
    std::memcpy(b.id.bytes.data(), &plain[idpos], 32);
    if (b.length < crypto::kOverhead)
      Fail(ErrorCode::kCorrupt, "pack " + pack + ": blob length too small");
    if (offset + b.length > 0xffffffffull)
      Fail(ErrorCode::kCorrupt, "pack " + pack + ": blob offsets exceed 4 GiB");
    b.offset = static_cast<uint32_t>(offset);
    offset += b.length;
    out.push_back(b);
    pos += need;
  }
  return out;
}

std::vector<PackedBlob> ParsePackHeader(const crypto::CryptoKey& key, ByteView tail,
                                        uint64_t file_size, const std::string& pack,
                                        uint64_t* need) {
  *need = 0;
  if (file_size < 4 + crypto::kOverhead)
    Fail(ErrorCode::kCorrupt, "pack " + pack + ": file is too short (" +
                                  std::to_string(file_size) + " bytes)");
  if (tail.size() < 4) {
    *need = 4;
    return {};
  }
  uint32_t hlen = GetU32Le(&tail[tail.size() - 4]);
  if (hlen == 0) Fail(ErrorCode::kCorrupt, "pack " + pack + ": header length is zero");
  if (hlen < crypto::kOverhead)
    Fail(ErrorCode::kCorrupt, "pack " + pack + ": header length is too short");
  if (hlen > kMaxHeaderSize)
    Fail(ErrorCode::kCorrupt, "pack " + pack + ": header length " + std::to_string(hlen) +
                                  " exceeds the 16 MiB limit");
  if (uint64_t(hlen) + 4 > file_size)
    Fail(ErrorCode::kCorrupt, "pack " + pack + ": header length " + std::to_string(hlen) +
                                  " is larger than the file");
  if (tail.size() < uint64_t(hlen) + 4) {
    *need = uint64_t(hlen) + 4;
    return {};
  }
  ByteView sealed = tail.subspan(tail.size() - 4 - hlen, hlen);
  auto plain = crypto::Open(key, sealed);
  if (!plain)
    Fail(ErrorCode::kCorrupt, "pack " + pack + ": header ciphertext verification failed");
  auto blobs = ParseHeaderEntries(*plain, pack);
  uint64_t data_end = file_size - 4 - hlen;
  uint64_t sum = 0;
  for (const auto& b : blobs) sum += b.length;
  if (sum != data_end)
    Fail(ErrorCode::kCorrupt, "pack " + pack + ": header describes " + std::to_string(sum) +
                                  " bytes of blobs but the pack holds " +
                                  std::to_string(data_end));
  return blobs;
}

}  // namespace haven
