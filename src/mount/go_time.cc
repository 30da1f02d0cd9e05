// Go's time.Time.Format for mount's --time-template (see snapshot_dirs.h).
#include <time.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "mount/snapshot_dirs.h"

namespace haven::mount {

namespace {

constexpr const char* kMonths[] = {"January", "February", "March",     "April",
                                   "May",     "June",     "July",      "August",
                                   "September", "October", "November", "December"};
constexpr const char* kDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                 "Thursday", "Friday", "Saturday"};

std::string Num(int v, int width, char pad = '0') {
  std::string s = std::to_string(v < 0 ? -v : v);
  while (static_cast<int>(s.size()) < width) s.insert(s.begin(), pad);
  return v < 0 ? "-" + s : s;
}

// The zone forms: `z` allows "Z" for offset 0; `colon` puts ':' between hours and minutes;
// `minutes`/`seconds` which parts print.
std::string Zone(int offset, bool z, bool colon, bool minutes, bool seconds) {
  if (z && offset == 0) return "Z";
  std::string s = offset < 0 ? "-" : "+";
  const int a = offset < 0 ? -offset : offset;
  s += Num(a / 3600, 2);
  if (minutes) s += (colon ? ":" : "") + Num(a / 60 % 60, 2);
  if (seconds) s += (colon ? ":" : "") + Num(a % 60, 2);
  return s;
}

struct Civil {
  struct tm tm;
  int offset;
  int32_t nsec;
};

// One reference token at the start of `l`: appends its value and returns its length, or 0
// when `l` does not start with a token.
size_t Token(std::string_view l, const Civil& c, std::string& out) {
  const struct tm& t = c.tm;
  auto starts = [&](std::string_view p) { return l.substr(0, p.size()) == p; };
  const int hour12 = t.tm_hour % 12 == 0 ? 12 : t.tm_hour % 12;
  struct Tok {
    const char* text;
    std::string value;
  };
  const Tok toks[] = {
      {"January", kMonths[t.tm_mon]},
      {"Jan", std::string(kMonths[t.tm_mon], 3)},
      {"Monday", kDays[t.tm_wday]},
      {"Mon", std::string(kDays[t.tm_wday], 3)},
      {"MST", c.offset == 0 ? "UTC" : Zone(c.offset, false, false, true, false)},
      {"2006", Num(t.tm_year + 1900, 4)},
      {"01", Num(t.tm_mon + 1, 2)},
      {"02", Num(t.tm_mday, 2)},
      {"03", Num(hour12, 2)},
      {"04", Num(t.tm_min, 2)},
      {"05", Num(t.tm_sec, 2)},
      {"06", Num((t.tm_year + 1900) % 100, 2)},
      {"15", Num(t.tm_hour, 2)},
      {"_2", Num(t.tm_mday, 2, ' ')},
      {"-07:00:00", Zone(c.offset, false, true, true, true)},
      {"-070000", Zone(c.offset, false, false, true, true)},
      {"-07:00", Zone(c.offset, false, true, true, false)},
      {"-0700", Zone(c.offset, false, false, true, false)},
      {"-07", Zone(c.offset, false, false, false, false)},
      {"Z07:00:00", Zone(c.offset, true, true, true, true)},
      {"Z070000", Zone(c.offset, true, false, true, true)},
      {"Z07:00", Zone(c.offset, true, true, true, false)},
      {"Z0700", Zone(c.offset, true, false, true, false)},
      {"Z07", Zone(c.offset, true, false, false, false)},
      {"PM", t.tm_hour >= 12 ? "PM" : "AM"},
      {"pm", t.tm_hour >= 12 ? "pm" : "am"},
      {"1", std::to_string(t.tm_mon + 1)},
      {"2", std::to_string(t.tm_mday)},
      {"3", std::to_string(hour12)},
      {"4", std::to_string(t.tm_min)},
      {"5", std::to_string(t.tm_sec)},
  };
  for (const Tok& k : toks) {
    if (!starts(k.text)) continue;
    out += k.value;
    return std::string_view(k.text).size();
  }
  // Fractional seconds: ".000" (fixed digits) or ".999" (trailing zeros dropped).
  if ((l[0] == '.' || l[0] == ',') && l.size() > 1 && (l[1] == '0' || l[1] == '9')) {
    size_t n = 1;
    while (n < l.size() && l[n] == l[1]) n++;
    if (n < l.size() && l[n] >= '0' && l[n] <= '9') return 0;
    std::string digits = Num(c.nsec, 9).substr(0, n - 1);
    if (l[1] == '9') {
      while (!digits.empty() && digits.back() == '0') digits.pop_back();
      if (!digits.empty()) out += l[0] + digits;
    } else {
      out += l[0] + digits;
    }
    return n;
  }
  return 0;
}

}  // namespace

std::string FormatGoTime(const gojson::Timestamp& ts, std::string_view layout) {
  Civil c{};
  c.offset = ts.offset;
  c.nsec = ts.nsec;
  const time_t local = static_cast<time_t>(ts.sec + ts.offset);
  gmtime_r(&local, &c.tm);
  std::string out;
  size_t i = 0;
  while (i < layout.size()) {
    const size_t n = Token(layout.substr(i), c, out);
    if (n == 0) {
      out += layout[i];
      i++;
    } else {
      i += n;
    }
  }
  return out;
}

}  // namespace haven::mount
