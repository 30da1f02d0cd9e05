// Fuzz target: the REST listing parsers (a REST server's directory listing is untrusted JSON).
// Any input either parses or throws haven::Error kIo; parsed names and counts are bounded by
// the input's size.
#include <cstdint>
#include <string_view>

#include "backend/rest_listing.h"
#include "core/error.h"
#include "core/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  try {
    auto names = haven::ParseRestListV1(json, "fuzz");
    FUZZ_CHECK(names.size() <= size);
    for (const auto& n : names) FUZZ_CHECK(n.size() <= size);
  } catch (const haven::Error& e) {
    FUZZ_CHECK(e.code() == haven::ErrorCode::kIo);
  }
  try {
    auto items = haven::ParseRestListV2(json, "fuzz");
    FUZZ_CHECK(items.size() <= size);
    for (const auto& fi : items) FUZZ_CHECK(fi.name.size() <= size);
  } catch (const haven::Error& e) {
    FUZZ_CHECK(e.code() == haven::ErrorCode::kIo);
  }
  return 0;
}
