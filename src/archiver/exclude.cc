#include "archiver/exclude.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "core/error.h"
#include "repo/gojson.h"

namespace haven {

namespace {

// Go's filepath.Dir for an absolute, clean path.
std::string_view DirOf(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string Quoted(const std::string& s) { return "\"" + gojson::QuoteName(s) + "\""; }

}  // namespace

ExcludeIfPresent ParseExcludeIfPresent(std::string_view spec) {
  if (spec.empty())
    Fail(ErrorCode::kInvalidArgument, "--exclude-if-present: name for exclusion tagfile is empty");
  size_t colon = spec.find(':');
  if (colon == 0)
    Fail(ErrorCode::kInvalidArgument,
         "--exclude-if-present " + std::string(spec) + ": no name for exclusion tagfile provided");
  ExcludeIfPresent r;
  if (colon == std::string_view::npos) {
    r.file = std::string(spec);
  } else {
    r.file = std::string(spec.substr(0, colon));
    r.header = std::string(spec.substr(colon + 1));
  }
  return r;
}

ExcludeIfPresent CacheDirTag() {
  return {"CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55"};
}

std::optional<int64_t> ParseSize(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t unit = 1;
  std::string_view num = s.substr(0, s.size() - 1);
  switch (s.back()) {
    case 'b':
    case 'B':
      break;
    case 'k':
    case 'K':
      unit = int64_t{1} << 10;
      break;
    case 'm':
    case 'M':
      unit = int64_t{1} << 20;
      break;
    case 'g':
    case 'G':
      unit = int64_t{1} << 30;
      break;
    case 't':
    case 'T':
      unit = int64_t{1} << 40;
      break;
    default:
      num = s;
  }
  if (!num.empty() && num[0] == '+') {
    num.remove_prefix(1);
    if (!num.empty() && num[0] == '-') return std::nullopt;
  }
  if (num.empty()) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v, 10);
  if (ec != std::errc() || end != num.data() + num.size()) return std::nullopt;
  int64_t out;
  if (__builtin_mul_overflow(v, unit, &out)) return std::nullopt;
  return out;
}

Excluder::Excluder(const ExcludeRules& rules, const std::vector<std::string>& abs_targets,
                   std::function<void(const std::string&)> notice)
    : rules_(rules),
      by_name_(rules.by_name()),
      by_stat_(rules.by_stat()),
      notice_(std::move(notice)) {
  if (!rules.one_file_system) return;
  for (const std::string& t : abs_targets) {
    struct stat st;
    if (lstat(t.c_str(), &st) == 0) devices_.emplace(t, st.st_dev);
  }
}

bool Excluder::DirTagged(std::string_view dir, const ExcludeIfPresent& rule) const {
  std::string tf = dir == "/" ? "/" + rule.file : std::string(dir) + "/" + rule.file;
  struct stat st;
  if (lstat(tf.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR && notice_)
      notice_("could not access exclusion tagfile: lstat " + tf + ": " + strerror(errno));
    return false;
  }
  if (rule.header.empty()) return true;
  int fd = open(tf.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (notice_) notice_("could not open exclusion tagfile: open " + tf + ": " + strerror(errno));
    return false;
  }
  std::string buf(rule.header.size(), '\0');
  size_t got = 0;
  int err = 0;
  while (got < buf.size()) {
    ssize_t n = read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (err != 0) {
    if (notice_)
      notice_("could not read signature from exclusion tagfile " + Quoted(tf) + ": read " + tf +
              ": " + strerror(err));
    return false;
  }
  if (got == 0) {
    if (notice_) notice_("invalid (too short) signature in exclusion tagfile " + Quoted(tf));
    return false;
  }
  if (got < buf.size()) {
    if (notice_)
      notice_("could not read signature from exclusion tagfile " + Quoted(tf) + ": unexpected EOF");
    return false;
  }
  if (buf != rule.header) {
    if (notice_) notice_("invalid signature in exclusion tagfile " + Quoted(tf));
    return false;
  }
  return true;
}

bool Excluder::ExcludedByName(const std::string& path, std::string_view dir, std::string_view name,
                              DirState& state) const {
  if (!rules_.iexcludes.empty() && rules_.iexcludes.Matches(FoldCase(path))) return true;
  if (!rules_.excludes.empty() && rules_.excludes.Matches(path)) return true;
  if (rules_.if_present.empty()) return false;
  if (state.tagged.size() < rules_.if_present.size()) state.tagged.resize(rules_.if_present.size());
  for (size_t i = 0; i < rules_.if_present.size(); ++i) {
    const ExcludeIfPresent& rule = rules_.if_present[i];
    if (name == rule.file) continue;  // the tag file itself is kept
    if (!state.tagged[i]) state.tagged[i] = DirTagged(dir, rule);
    if (*state.tagged[i]) return true;
  }
  return false;
}

bool Excluder::DeviceAllowed(std::string_view path, dev_t dev) const {
  for (std::string_view dir = path;; dir = DirOf(dir)) {
    auto it = devices_.find(dir);
    if (it != devices_.end()) return it->second == dev;
    if (dir == "/" || dir == ".") return true;  // not under a source path: not restic's case
  }
}

bool Excluder::ExcludedByStat(const std::string& path, const struct stat& st) const {
  if (rules_.one_file_system && !DeviceAllowed(path, st.st_dev)) {
    // Another file system: only its mount point is kept (as the directory it is), the
    // mount point being a directory whose parent is on an allowed device.
    if (!S_ISDIR(st.st_mode)) return true;
    std::string parent(DirOf(path));
    struct stat pst;
    if (lstat(parent.c_str(), &pst) != 0) return true;
    if (!DeviceAllowed(parent, pst.st_dev)) return true;
  }
  if (rules_.larger_than && !S_ISDIR(st.st_mode) && st.st_size > *rules_.larger_than) return true;
  return false;
}

}  // namespace haven
