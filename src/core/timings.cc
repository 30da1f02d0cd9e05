#include "core/timings.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace haven {

std::atomic<uint64_t> Timings::totals_[static_cast<int>(Stage::kCount)];

bool Timings::Enabled() {
  static const bool on = [] {
    auto set = [](const char* name) {
      const char* v = std::getenv(name);
      return v && *v && std::strcmp(v, "0") != 0;
    };
    return set("HAVEN_TIMINGS") || set("HAVEN_IMPORT_TIMINGS");
  }();
  return on;
}

std::string Timings::Report(const char* command, double wall_seconds) {
  static const char* kNames[] = {"walk",       "read",   "chunk",       "hash",   "compress",
                                 "seal",       "write",  "index",       "snapshot", "load",
                                 "decode",     "index-load", "plan",    "repack", "index-write",
                                 "delete"};
  static_assert(std::size(kNames) == static_cast<size_t>(Stage::kCount));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "timings %s: wall %.3fs | worker-s:", command, wall_seconds);
  std::string out = buf;
  for (int i = 0; i < static_cast<int>(Stage::kCount); ++i) {
    uint64_t ns = totals_[i].load(std::memory_order_relaxed);
    if (!ns) continue;
    std::snprintf(buf, sizeof(buf), " %s %.3f", kNames[i], double(ns) / 1e9);
    out += buf;
  }
  return out;
}

void Timings::PrintIfEnabled(const char* command, double wall_seconds) {
  if (Enabled()) std::fprintf(stderr, "%s\n", Report(command, wall_seconds).c_str());
}

}  // namespace haven
