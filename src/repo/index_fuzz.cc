// Fuzz target: index files (docs/format.md §8), the JSON inside an unpacked index file.
// A parsed index must serialise again, parse back to the same bytes, and load into the
// in-memory Index with every blob found.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/fuzz_check.h"
#include "core/error.h"
#include "repo/index.h"


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  IndexFile f;
  try {
    f = IndexFile::Parse(json, "fuzz");
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
    return 0;
  }
  const std::string out = f.ToJson();
  IndexFile g;
  try {
    g = IndexFile::Parse(out, "fuzz-reparse");
  } catch (const Error& e) {
    std::fprintf(stderr, "re-parse failed: %s\n%s\n", e.what(), out.c_str());
    std::abort();
  }
  FUZZ_CHECK(g.ToJson() == out);
  FUZZ_CHECK(g.supersedes.empty());

  Index idx;
  size_t blobs = 0;
  for (const auto& p : f.packs) {
    idx.AddPack(p.id, p.blobs);
    blobs += p.blobs.size();
  }
  FUZZ_CHECK(idx.BlobCount() == blobs);
  for (const auto& p : f.packs) {
    FUZZ_CHECK(idx.HasPack(p.id));
    for (const auto& b : p.blobs) {
      FUZZ_CHECK(idx.Has(b.type, b.id));
      bool found = false;
      for (const auto& l : idx.Lookup(b.type, b.id))
        found |= l.pack == p.id && l.offset == b.offset && l.length == b.length;
      FUZZ_CHECK(found);
    }
  }
  return 0;
}
