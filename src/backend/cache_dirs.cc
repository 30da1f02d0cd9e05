#include "backend/cache_dirs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace haven {

namespace {

uint64_t TreeBytes(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  uint64_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  if (ec) Fail(ErrorCode::kIo, "cannot read cache folder " + dir.string() + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) Fail(ErrorCode::kIo, "cannot read cache folder " + dir.string() + ": " + ec.message());
    struct stat st;
    if (lstat(it->path().c_str(), &st) != 0) continue;  // removed meanwhile
    if (!S_ISDIR(st.st_mode)) total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

}  // namespace

bool IsCacheDirName(const std::string& name) {
  if (name.size() == 64)
    return std::all_of(name.begin(), name.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  const std::string prefix = "restic-check-cache-";
  return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         std::all_of(name.begin() + prefix.size(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<CacheDir> ListCacheDirs(const std::string& base, bool with_size) {
  namespace fs = std::filesystem;
  std::vector<CacheDir> out;
  std::error_code ec;
  fs::directory_iterator it(base, ec), end;
  if (ec == std::errc::no_such_file_or_directory) return out;
  if (ec) Fail(ErrorCode::kIo, "cannot read cache directory " + base + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) Fail(ErrorCode::kIo, "cannot read cache directory " + base + ": " + ec.message());
    const std::string name = it->path().filename().string();
    struct stat st;
    if (!IsCacheDirName(name) || lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      continue;
    CacheDir d{name, static_cast<int64_t>(st.st_mtim.tv_sec), 0};
    if (with_size) d.bytes = TreeBytes(it->path());
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CacheDir& a, const CacheDir& b) { return a.mtime < b.mtime; });
  return out;
}

bool IsOldCacheDir(const CacheDir& d, unsigned max_age_days, int64_t now) {
  return d.mtime < now - static_cast<int64_t>(max_age_days) * 24 * 3600;
}

}  // namespace haven
