// Fuzz target: the capture profile (TOML through toml++, then haven's schema). Any input
// either parses or throws kInvalidArgument; nothing else may escape.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "capture/profile.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    capture::Profile p = capture::Profile::Parse(text, "/home/fuzz", "fuzz.toml");
    if (p.package_timeout_s < 1 || p.package_timeout_s > 3600) std::abort();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument) {
      std::fprintf(stderr, "unexpected error code: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
