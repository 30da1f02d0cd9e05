// Fuzz target: pack headers (docs/format.md §7). Every input is tried three ways:
//  1. as a whole pack file, parsed with a fixed key (ParsePackHeader);
//  2. as plaintext header entries (ParseHeaderEntries);
//  3. as [u16 LE data length][header plaintext]: the header is sealed with the fixed key
//     and wrapped into a pack, so the fuzzer reaches the entry checks behind the MAC.
// Parsers must either return consistent entries or throw haven::Error (kCorrupt).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/fuzz_check.h"
#include "core/error.h"
#include "crypto/crypto_key.h"
#include "crypto/seal.h"
#include "repo/pack.h"

namespace {

using namespace haven;


const crypto::CryptoKey& FixedKey() {
  static const crypto::CryptoKey key = [] {
    Bytes dk(64);
    for (size_t i = 0; i < dk.size(); ++i) dk[i] = static_cast<uint8_t>(i);
    return crypto::CryptoKey::FromDerived(dk);
  }();
  return key;
}

void CheckEntries(const std::vector<PackedBlob>& blobs) {
  uint64_t offset = 0;
  for (const PackedBlob& b : blobs) {
    FUZZ_CHECK(b.type == BlobType::kData || b.type == BlobType::kTree);
    FUZZ_CHECK(b.offset == offset);
    FUZZ_CHECK(b.length >= crypto::kOverhead);
    offset += b.length;
    FUZZ_CHECK(offset <= 0xffffffffull);
  }
}

// Parses like a reader with ranged loads: a small tail first, then what is asked for.
void ParseFile(ByteView file) {
  const std::string name = "fuzz";
  for (size_t first : {file.size(), size_t{8}}) {
    try {
      uint64_t need = 0;
      size_t have = std::min(first, file.size());
      std::vector<PackedBlob> blobs;
      for (int round = 0; round < 3; ++round) {
        blobs = ParsePackHeader(FixedKey(), file.subspan(file.size() - have), file.size(), name,
                                &need);
        if (need == 0) break;
        FUZZ_CHECK(need > have && need <= file.size());
        have = need;
      }
      FUZZ_CHECK(need == 0);
      CheckEntries(blobs);
      uint64_t sum = 0;
      for (const auto& b : blobs) sum += b.length;
      FUZZ_CHECK(sum + PackHeaderSize(blobs) == file.size());
    } catch (const Error& e) {
      FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteView in(data, size);
  ParseFile(in);

  try {
    auto blobs = ParseHeaderEntries(in, "fuzz");
    CheckEntries(blobs);
    FUZZ_CHECK(PackHeaderSize(blobs) == size + crypto::kOverhead + 4);
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
  }

  if (size >= 2) {
    const size_t data_len = size_t(data[0]) | size_t(data[1]) << 8;
    const ByteView header = in.subspan(2);
    static const Bytes iv = [] {
      Bytes v(16);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(0xa0 + i);
      return v;
    }();
    Bytes file(data_len, 0x5a);
    Bytes sealed = crypto::SealWithIv(FixedKey(), iv, header);
    file.insert(file.end(), sealed.begin(), sealed.end());
    PutU32Le(file, static_cast<uint32_t>(sealed.size()));
    ParseFile(file);
  }
  return 0;
}
