// Small output formats of restic 0.14's command line (cmd/restic/format.go) that the
// commands of issue 14 print exactly.
#pragma once

#include <cstdint>
#include <string>

#include "repo/gojson.h"

namespace haven::cli {

// restic's formatBytes: "%d B" up to and including 1024 bytes, then "%.3f KiB", "MiB",
// "GiB", "TiB" (a unit is used only when the value is strictly above it).
std::string ResticBytes(uint64_t n);

// Go's time.Time.String() (without a monotonic reading): "2006-01-02 15:04:05.999999999
// -0700 MST". The zone name is "UTC" for offset 0, the local zone's abbreviation when the
// offset is the local one at that instant, else the numeric offset again.
std::string GoTimeString(const gojson::Timestamp& t);

}  // namespace haven::cli
