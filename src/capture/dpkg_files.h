// Files that Debian packages installed, as dpkg recorded them: `<root>/var/lib/dpkg/info/
// *.md5sums` (one "MD5  path" line per file, the path relative to the root) and the
// conffiles of `<root>/var/lib/dpkg/status` (" /etc/path MD5" lines). A file whose content
// still has the MD5 its package shipped is public (documentation, examples, default
// configuration), so `haven scan` does not report its findings; a user's modified copy, or
// a file at the same path relative to another directory, is not matched.
//
// Nothing is read until the first lookup (most scans never need one). Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/mutex.h"

namespace haven::capture {

using Md5 = std::array<uint8_t, 16>;

// One parsed record: the path relative to the root (no leading '/') and its MD5.
struct DpkgRecord {
  std::string path;
  Md5 md5{};
};

// "<32 hex>  <path>" lines (md5sums); lines that are not in that shape are skipped.
std::vector<DpkgRecord> ParseMd5sums(std::string_view text);
// The Conffiles fields of a dpkg status file: " /path <32 hex>[ obsolete|newconffile...]".
std::vector<DpkgRecord> ParseStatusConffiles(std::string_view text);

// MD5 of a byte string (OpenSSL), and of a file read in 1 MiB pieces (kIo when unreadable).
Md5 Md5Of(std::string_view bytes);
Md5 Md5OfFile(const std::string& path);

class DpkgFiles {
 public:
  // `root` is the file-system root dpkg manages ("/" normally; tests use a directory
  // holding var/lib/dpkg/ and the files).
  explicit DpkgFiles(std::string root = "/");

  // True when `path` (absolute, or relative to the working directory) lies under the root
  // and its package recorded an MD5 for it equal to `md5`.
  bool IsUnmodified(std::string_view path, const Md5& md5) EXCLUDES(mu_);
  // Whether any package records the path (loads the records on first call).
  bool IsPackaged(std::string_view path) EXCLUDES(mu_);
  // The number of records loaded (0 before the first lookup).
  size_t size() const EXCLUDES(mu_);

 private:
  struct Entry {
    uint64_t path_hash;
    Md5 md5;
    bool operator<(const Entry& o) const { return path_hash < o.path_hash || (path_hash == o.path_hash && md5 < o.md5); }
  };
  // The path relative to the root, "" when it is not below it.
  std::string Relative(std::string_view path) const;
  void Load() REQUIRES(mu_);

  const std::string root_;
  mutable Mutex mu_;
  bool loaded_ GUARDED_BY(mu_) = false;
  std::vector<Entry> entries_ GUARDED_BY(mu_);  // sorted
};

}  // namespace haven::capture
