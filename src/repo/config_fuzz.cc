// Fuzz target: the config JSON (docs/format.md §5). Parse must accept only version 1/2 with a
// 64-hex id and an irreducible polynomial of degree <= 53, and its output must parse back.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/fuzz_check.h"
#include "chunker/polynomial.h"
#include "core/error.h"
#include "repo/config.h"


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  RepoConfig c;
  try {
    c = RepoConfig::Parse(json);
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt || e.code() == ErrorCode::kUnsupported);
    return 0;
  }
  FUZZ_CHECK(c.version == 1 || c.version == 2);
  FUZZ_CHECK(c.id.size() == 64);
  FUZZ_CHECK(chunker::IsIrreducible(c.chunker_polynomial));
  FUZZ_CHECK(chunker::Degree(c.chunker_polynomial) <= 53);
  const std::string out = c.ToJson();
  try {
    RepoConfig d = RepoConfig::Parse(out);
    FUZZ_CHECK(d.version == c.version && d.chunker_polynomial == c.chunker_polynomial);
    FUZZ_CHECK(d.ToJson() == out);
  } catch (const Error& e) {
    std::fprintf(stderr, "re-parse failed: %s\n%s\n", e.what(), out.c_str());
    std::abort();
  }
  return 0;
}
