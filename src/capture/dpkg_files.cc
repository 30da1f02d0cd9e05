#include "capture/dpkg_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>

#include "capture/fs.h"
#include "core/error.h"

namespace haven::capture {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseMd5(std::string_view hex, Md5& out) {
  if (hex.size() != 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

// The path's components without "" and "."; false when one is "..".
bool Components(std::string_view p, std::vector<std::string_view>& out) {
  out.clear();
  while (!p.empty()) {
    size_t s = p.find('/');
    std::string_view c = p.substr(0, s);
    p = s == std::string_view::npos ? std::string_view() : p.substr(s + 1);
    if (c.empty() || c == ".") continue;
    if (c == "..") return false;
    out.push_back(c);
  }
  return true;
}

std::string Absolute(std::string_view p) {
  if (!p.empty() && p[0] == '/') return std::string(p);
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof(cwd))) return "";
  return std::string(cwd) + "/" + std::string(p);
}

// FNV-1a, 64 bits: a fixed hash of the relative path (a collision would also need the
// same MD5 to matter).
uint64_t PathHash(std::string_view p) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : p) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string_view TrimCr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

template <typename F>
void ForEachLine(std::string_view text, F&& f) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    f(TrimCr(text.substr(0, nl)));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
}

}  // namespace

std::vector<DpkgRecord> ParseMd5sums(std::string_view text) {
  std::vector<DpkgRecord> out;
  ForEachLine(text, [&](std::string_view line) {
    // md5sum's format: 32 hex, two blanks (or blank + '*'), the path.
    if (line.size() < 35 || line[32] != ' ' || (line[33] != ' ' && line[33] != '*')) return;
    DpkgRecord r;
    if (!ParseMd5(line.substr(0, 32), r.md5)) return;
    std::string_view p = line.substr(34);
    while (!p.empty() && p[0] == '/') p.remove_prefix(1);
    if (p.empty()) return;
    r.path = std::string(p);
    out.push_back(std::move(r));
  });
  return out;
}

std::vector<DpkgRecord> ParseStatusConffiles(std::string_view text) {
  std::vector<DpkgRecord> out;
  bool in_conffiles = false;
  ForEachLine(text, [&](std::string_view line) {
    if (line.empty() || (line[0] != ' ' && line[0] != '\t')) {
      in_conffiles = line.starts_with("Conffiles:");
      return;
    }
    if (!in_conffiles) return;
    // " /etc/x MD5[ flag...]": the path may hold blanks, so find the MD5 from the right.
    std::string_view rest = line.substr(1);
    while (!rest.empty()) {
      size_t sp = rest.rfind(' ');
      if (sp == std::string_view::npos) return;
      std::string_view word = rest.substr(sp + 1);
      DpkgRecord r;
      if (ParseMd5(word, r.md5)) {
        std::string_view p = rest.substr(0, sp);
        while (!p.empty() && p[0] == '/') p.remove_prefix(1);
        if (p.empty()) return;
        r.path = std::string(p);
        out.push_back(std::move(r));
        return;
      }
      rest = rest.substr(0, sp);  // a flag after the MD5 (obsolete, remove-on-upgrade)
    }
  });
  return out;
}

Md5 Md5Of(std::string_view bytes) {
  Md5 out{};
  unsigned len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, EVP_md5(), nullptr) != 1 || len != 16)
    Fail(ErrorCode::kFatal, "openssl: MD5 unavailable");
  return out;
}

Md5 Md5OfFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) Fail(ErrorCode::kIo, "open " + path + ": " + strerror(errno));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_md5(), nullptr) == 1;
  std::string buf(1 << 20, '\0');
  int err = 0;
  while (ok) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break;
    ok = EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(n)) == 1;
  }
  close(fd);
  if (err) Fail(ErrorCode::kIo, "read " + path + ": " + strerror(err));
  Md5 out{};
  unsigned len = 0;
  if (!ok || EVP_DigestFinal_ex(ctx.get(), out.data(), &len) != 1 || len != 16)
    Fail(ErrorCode::kFatal, "openssl: MD5 unavailable");
  return out;
}

DpkgFiles::DpkgFiles(std::string root) : root_(std::move(root)) {}

std::string DpkgFiles::Relative(std::string_view path) const {
  std::vector<std::string_view> root, p;
  std::string abs = Absolute(path), abs_root = Absolute(root_);
  if (!Components(abs_root, root) || !Components(abs, p)) return "";
  if (p.size() <= root.size() || !std::equal(root.begin(), root.end(), p.begin())) return "";
  std::string rel;
  for (size_t i = root.size(); i < p.size(); ++i) {
    if (!rel.empty()) rel.push_back('/');
    rel.append(p[i]);
  }
  return rel;
}

void DpkgFiles::Load() {
  loaded_ = true;
  const std::string info = root_ + "/var/lib/dpkg/info";
  std::vector<DpkgRecord> all;
  if (DIR* d = opendir(info.c_str())) {
    while (struct dirent* de = readdir(d)) {
      std::string_view n = de->d_name;
      if (!n.ends_with(".md5sums")) continue;
      try {
        auto recs = ParseMd5sums(ReadWholeFile(info + "/" + std::string(n)));
        std::move(recs.begin(), recs.end(), std::back_inserter(all));
      } catch (const Error&) {
        // An unreadable list only means its files are reported as usual.
      }
    }
    closedir(d);
  }
  try {
    auto recs = ParseStatusConffiles(ReadWholeFile(root_ + "/var/lib/dpkg/status"));
    std::move(recs.begin(), recs.end(), std::back_inserter(all));
  } catch (const Error&) {
  }
  entries_.reserve(all.size());
  for (const auto& r : all) entries_.push_back(Entry{PathHash(r.path), r.md5});
  std::sort(entries_.begin(), entries_.end());
}

bool DpkgFiles::IsUnmodified(std::string_view path, const Md5& md5) {
  std::string rel = Relative(path);
  if (rel.empty()) return false;
  MutexLock lock(mu_);
  if (!loaded_) Load();
  return std::binary_search(entries_.begin(), entries_.end(), Entry{PathHash(rel), md5});
}

bool DpkgFiles::IsPackaged(std::string_view path) {
  std::string rel = Relative(path);
  if (rel.empty()) return false;
  MutexLock lock(mu_);
  if (!loaded_) Load();
  uint64_t h = PathHash(rel);
  auto it = std::lower_bound(entries_.begin(), entries_.end(), Entry{h, Md5{}});
  return it != entries_.end() && it->path_hash == h;
}

size_t DpkgFiles::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}

}  // namespace haven::capture
