// Fuzz target: tree blobs (docs/format.md §10). DecodeTree must return nodes or throw
// kCorrupt. The nodes, sorted by name and de-duplicated, must encode, and that encoding
// must be a fixed point: decoding and encoding it again gives the same bytes (the tree id
// of anything we write is stable).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/fuzz_check.h"
#include "core/error.h"
#include "repo/node.h"


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  std::vector<Node> nodes;
  try {
    nodes = DecodeTree(json, "fuzz");
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::kCorrupt);
    return 0;
  }
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const Node& a, const Node& b) { return a.name < b.name; });
  nodes.erase(std::unique(nodes.begin(), nodes.end(),
                          [](const Node& a, const Node& b) { return a.name == b.name; }),
              nodes.end());
  std::string first;
  try {
    first = EncodeTree(nodes);
  } catch (const Error& e) {
    std::fprintf(stderr, "EncodeTree failed on decoded nodes: %s\n", e.what());
    std::abort();
  }
  std::string second;
  try {
    second = EncodeTree(DecodeTree(first, "fuzz-reencoded"));
  } catch (const Error& e) {
    std::fprintf(stderr, "re-decode failed: %s\n%s\n", e.what(), first.c_str());
    std::abort();
  }
  if (second != first) {
    std::fprintf(stderr, "encoding is not a fixed point:\n%s%s", first.c_str(), second.c_str());
    std::abort();
  }
  return 0;
}
