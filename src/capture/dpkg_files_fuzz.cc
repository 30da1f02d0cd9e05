// Fuzz target: the parsers of dpkg's records (info/*.md5sums and the status file's
// Conffiles); the first byte picks one. Every record has a non-empty relative path
// without a newline.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "capture/dpkg_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven::capture;
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto recs = data[0] % 2 ? ParseStatusConffiles(text) : ParseMd5sums(text);
  for (const auto& r : recs) {
    if (r.path.empty() || r.path[0] == '/' || r.path.find('\n') != std::string::npos) std::abort();
  }
  (void)Md5Of(text);
  return 0;
}
