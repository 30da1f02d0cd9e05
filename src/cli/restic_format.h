// Small output formats of restic 0.14's command line (cmd/restic/format.go) that the
// commands of issue 14 print exactly.
#pragma once

#include <cstdint>
#include <string>

namespace haven::cli {

// restic's formatBytes: "%d B" up to and including 1024 bytes, then "%.3f KiB", "MiB",
// "GiB", "TiB" (a unit is used only when the value is strictly above it).
std::string ResticBytes(uint64_t n);

}  // namespace haven::cli
