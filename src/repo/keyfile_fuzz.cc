// Fuzz target: key files (docs/format.md §4) and the master-key JSON they wrap. Parsing only:
// no key derivation (hostile scrypt parameters must be refused by Parse itself). A parsed
// key file must serialise and parse back to the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/fuzz_check.h"
#include "core/error.h"
#include "crypto/kdf.h"
#include "repo/key_file.h"


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  try {
    KeyFile k = KeyFile::Parse(json, "fuzz");
    FUZZ_CHECK(k.kdf == "scrypt");
    FUZZ_CHECK(k.salt.size() == 64);
    FUZZ_CHECK(k.data.size() >= 32);
    // Whatever Parse accepts must be safe to derive with (bounded memory and work).
    try {
      crypto::CheckScryptParams(k.params);
    } catch (const Error& e) {
      std::fprintf(stderr, "Parse accepted parameters the KDF refuses: %s\n", e.what());
      std::abort();
    }
    FUZZ_CHECK(crypto::ScryptLaneMemory(k.params) <= crypto::kScryptMaxLaneMemory);
    const std::string out = k.ToJson();
    KeyFile k2;
    try {
      k2 = KeyFile::Parse(out, "fuzz-reparse");
    } catch (const Error& e) {
      std::fprintf(stderr, "re-parse failed: %s\n%s\n", e.what(), out.c_str());
      std::abort();
    }
    FUZZ_CHECK(k2.ToJson() == out);
    FUZZ_CHECK(k2.params == k.params && k2.salt == k.salt && k2.data == k.data);
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
  }
  try {
    crypto::CryptoKey mk = MasterKeyFromJson(json, "fuzz");
    FUZZ_CHECK(mk.Valid());
    FUZZ_CHECK(MasterKeyFromJson(MasterKeyToJson(mk), "fuzz") == mk);
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
  }
  return 0;
}
