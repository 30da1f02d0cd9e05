#include "cli/restic_format.h"

#include <cstdio>

namespace haven::cli {

std::string ResticBytes(uint64_t c) {
  const double b = static_cast<double>(c);
  char buf[64];
  if (c > (uint64_t{1} << 40)) {
    std::snprintf(buf, sizeof(buf), "%.3f TiB", b / double(uint64_t{1} << 40));
  } else if (c > (uint64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.3f GiB", b / double(uint64_t{1} << 30));
  } else if (c > (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.3f MiB", b / double(uint64_t{1} << 20));
  } else if (c > (uint64_t{1} << 10)) {
    std::snprintf(buf, sizeof(buf), "%.3f KiB", b / double(uint64_t{1} << 10));
  } else {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(c));
  }
  return buf;
}

}  // namespace haven::cli
