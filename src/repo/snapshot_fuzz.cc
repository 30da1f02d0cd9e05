// Fuzz target: snapshot JSON (docs/format.md §9). A parsed snapshot must serialise, parse back
// and serialise to the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/fuzz_check.h"
#include "core/error.h"
#include "repo/snapshot.h"


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  Snapshot s;
  try {
    s = Snapshot::Parse(json, "fuzz");
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
    return 0;
  }
  const std::string out = s.ToJson();
  std::string again;
  try {
    again = Snapshot::Parse(out, "fuzz-reparse").ToJson();
  } catch (const Error& e) {
    std::fprintf(stderr, "re-parse failed: %s\n%s\n", e.what(), out.c_str());
    std::abort();
  }
  if (again != out) {
    std::fprintf(stderr, "not a fixed point:\n%s\n%s\n", out.c_str(), again.c_str());
    std::abort();
  }
  for (const std::string& t : s.tags) FUZZ_CHECK(s.HasTag(t));
  return 0;
}
