#include "cli/restic_format.h"

#include <cstdio>
#include <ctime>

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

// Moved from cmd_ls.cc (ls's header line), shared with rewrite.
std::string GoTimeString(const gojson::Timestamp& t) {
  time_t shown = static_cast<time_t>(t.sec + t.offset);
  struct tm tm;
  gmtime_r(&shown, &tm);
  char buf[96];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  std::string s = buf;
  if (t.nsec != 0) {
    std::snprintf(buf, sizeof(buf), ".%09d", t.nsec);
    std::string frac = buf;
    while (frac.back() == '0') frac.pop_back();
    s += frac;
  }
  int32_t minutes = t.offset / 60;
  char sign = minutes < 0 ? '-' : '+';
  if (minutes < 0) minutes = -minutes;
  std::snprintf(buf, sizeof(buf), " %c%02d%02d", sign, minutes / 60, minutes % 60);
  s += buf;
  std::string zone = s.substr(s.size() - 5);
  if (t.offset == 0) {
    zone = "UTC";
  } else {
    time_t at = static_cast<time_t>(t.sec);
    struct tm local;
    if (localtime_r(&at, &local) && local.tm_gmtoff == t.offset && local.tm_zone)
      zone = local.tm_zone;
  }
  return s + " " + zone;
}

}  // namespace haven::cli
