#include "backend/cache_backend.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "backend/posix_io.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/id.h"

namespace haven {
namespace {

using namespace posix;  // NOLINT(google-build-using-namespace): this file is its user

constexpr mode_t kDirMode = 0700;
constexpr mode_t kFileMode = 0600;      // cached copies
constexpr mode_t kPublicFileMode = 0644;  // version, CACHEDIR.TAG (as restic writes them)
// Temp files older than this are leftovers of a crashed writer and may be removed.
constexpr time_t kStaleTempSeconds = 3600;

std::string ErrnoText(int err) { return std::system_category().message(err); }

[[noreturn]] void FailErrno(int err, std::string_view what, const std::string& path) {
  Fail(ErrorCode::kIo, "cache: " + std::string(what) + " " + path + ": " + ErrnoText(err));
}






std::string DirOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

// Creates one folder (0700); an existing folder is fine. Returns 0 or errno.
int MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), kDirMode) == 0) return 0;
  int err = errno;
  if (err == EEXIST) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    return ENOTDIR;
  }
  return err;
}

// `mkdir -p` with mode 0700 for every folder it creates; throws kIo.
void MakeDirs(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    std::string prefix = path.substr(0, pos);
    if (prefix.empty() || prefix.back() == '/') continue;
    if (::mkdir(prefix.c_str(), kDirMode) != 0 && errno != EEXIST)
      FailErrno(errno, "create folder", prefix);
  }
  if (int err = MakeDir(path)) FailErrno(err, "create folder", path);
}

// Writes `data` to `path` through a temp file in the same folder and a rename, with the
// exact `mode`. `replace` false keeps an existing file. Returns 0 or errno.
int WriteFileAtomic(const std::string& path, ByteView data, mode_t mode, bool replace) {
  std::string tmp;
  int fd = -1, open_err = 0;
  // The file is created inside its interrupt registration (see interrupt::Cleanup), so a
  // Ctrl-C at any moment removes it.
  std::unique_ptr<interrupt::Cleanup> on_interrupt;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    tmp = path + "-tmp-" + RandomSuffix();
    on_interrupt = std::make_unique<interrupt::Cleanup>([tmp] { ::unlink(tmp.c_str()); }, [&] {
      fd = OpenNoIntr(tmp, O_WRONLY | O_CREAT | O_EXCL, kFileMode);
      open_err = errno;
      return fd >= 0;
    });
    if (fd < 0 && open_err != EEXIST) return open_err;
  }
  if (fd < 0) return EEXIST;
  Fd f(fd);
  int err = WriteAll(fd, data);
  if (!err && ::fchmod(fd, mode) != 0) err = errno;
  if (!err) err = f.Close();
  if (!err) {
    int rc = replace ? ::rename(tmp.c_str(), path.c_str())
                     : ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(),
                                   RENAME_NOREPLACE);
    if (rc != 0) err = errno;
    if (!replace && (err == EINVAL || err == ENOSYS || err == ENOTSUP)) {
      // No RENAME_NOREPLACE here: link() never replaces either.
      rc = ::link(tmp.c_str(), path.c_str());
      err = rc == 0 ? 0 : errno;
      if (rc == 0) {
        ::unlink(tmp.c_str());
        return 0;
      }
    }
    if (err == EEXIST && !replace) err = 0;  // someone else created it: keep theirs
    if (rc == 0) return 0;
  }
  ::unlink(tmp.c_str());
  return err;
}

bool IsCacheableType(FileType t) {
  return t == FileType::kSnapshot || t == FileType::kIndex || t == FileType::kPack;
}

bool IsHex2(std::string_view s) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  return s.size() == 2 && hex(s[0]) && hex(s[1]);
}

// Lists the entries of a folder (without "." and ".."); empty when it cannot be read.
std::vector<std::string> ReadDirNames(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* ent = ::readdir(d)) {
    std::string_view n = ent->d_name;
    if (n == "." || n == "..") continue;
    out.emplace_back(n);
  }
  ::closedir(d);
  return out;
}

Bytes Slice(Bytes all, uint64_t offset, uint64_t length) {
  if (offset == 0 && (length == 0 || length == all.size())) return all;
  return Bytes(all.begin() + static_cast<ptrdiff_t>(offset),
               all.begin() + static_cast<ptrdiff_t>(offset + length));
}

[[noreturn]] void FailCacheShortRead(const Handle& h, uint64_t offset, uint64_t length,
                                uint64_t size) {
  std::string wanted = length == 0 ? std::string("data") : std::to_string(length) + " bytes";
  Fail(ErrorCode::kCorrupt, "cache: short read of " + h.ToString() + ": expected " + wanted +
                                " at offset " + std::to_string(offset) + ", object has " +
                                std::to_string(size) + " bytes");
}

// True when [offset, offset+length) (length 0 = to the end) lies within `size` bytes;
// sets *want to the number of bytes to return.
bool RangeFits(uint64_t size, uint64_t offset, uint64_t length, uint64_t* want) {
  if (offset > size) return false;
  *want = length == 0 ? size - offset : length;
  return *want <= size - offset;
}

}  // namespace

struct CacheBackend::CachedRead {
  enum Status { kMiss, kHit, kBad } status = kMiss;
  Bytes data;
  bool have_id = false;  // dev/ino identify the bad file
  dev_t dev = 0;
  ino_t ino = 0;
  std::string why;
};

// Serialises loads, saves and removals of one cache path within this process.
class CacheBackend::InFlightLock {
 public:
  InFlightLock(CacheBackend* cb, const std::string& path) : cb_(cb), path_(path) {
    {
      MutexLock lock(cb_->inflight_mu_);
      auto& e = cb_->inflight_[path_];
      if (!e) e = std::make_shared<InFlight>();
      e->users++;
      entry_ = e;
    }
    entry_->mu.lock();
  }
  InFlightLock(const InFlightLock&) = delete;
  InFlightLock& operator=(const InFlightLock&) = delete;
  ~InFlightLock() {
    entry_->mu.unlock();
    MutexLock lock(cb_->inflight_mu_);
    if (--entry_->users == 0) cb_->inflight_.erase(path_);
  }

 private:
  CacheBackend* cb_;
  std::string path_;
  std::shared_ptr<InFlight> entry_;
};

CacheBackend::CacheBackend(std::shared_ptr<Backend> inner, std::string base_dir)
    : inner_(std::move(inner)), base_dir_(std::move(base_dir)) {}

std::string CacheBackend::DefaultBaseDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/haven";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/haven";
  return "";
}

void CacheBackend::SetRepositoryId(const std::string& id) {
  if (!IsValidObjectName(id))
    Fail(ErrorCode::kInvalidArgument, "cache: invalid repository id \"" + id + "\"");
  if (base_dir_.empty()) Fail(ErrorCode::kInvalidArgument, "cache: no cache folder given");
  std::string base = base_dir_;
  while (base.size() > 1 && base.back() == '/') base.pop_back();

  MakeDirs(base);
  const std::string tag = base + "/CACHEDIR.TAG";
  struct stat st;
  if (::stat(tag.c_str(), &st) != 0) {
    if (errno != ENOENT) FailErrno(errno, "stat", tag);
    if (int err = WriteFileAtomic(tag, AsBytes(kCacheDirTag), kPublicFileMode, false))
      FailErrno(err, "write", tag);
  }

  const std::string repo_dir = base + "/" + id;
  const std::string version = repo_dir + "/version";
  if (int err = MakeDir(repo_dir)) FailErrno(err, "create folder", repo_dir);
  bool write_version = true;
  {
    Fd fd(OpenNoIntr(version, O_RDONLY));
    if (fd.get() >= 0) {
      char buf[32];
      ssize_t n;
      do {
        n = ::read(fd.get(), buf, sizeof(buf));
      } while (n < 0 && errno == EINTR);
      if (n < 0) FailErrno(errno, "read", version);
      std::string text(buf, static_cast<size_t>(n));
      char* end = nullptr;
      unsigned long v = text.empty() ? 0 : std::strtoul(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || text[0] < '0' || text[0] > '9')
        Fail(ErrorCode::kCorrupt, "cache: " + version + ": invalid version \"" + text + "\"");
      if (v > static_cast<unsigned long>(kCacheVersion))
        Fail(ErrorCode::kUnsupported, "cache: " + repo_dir + " has version " + std::to_string(v) +
                                          ", newer than the supported version " +
                                          std::to_string(kCacheVersion));
      write_version = v < static_cast<unsigned long>(kCacheVersion);
    } else if (errno != ENOENT) {
      FailErrno(errno, "open", version);
    }
  }
  if (write_version) {
    const std::string v = std::to_string(kCacheVersion);
    if (int err = WriteFileAtomic(version, AsBytes(v), kPublicFileMode, true))
      FailErrno(err, "write", version);
  }
  for (FileType t : {FileType::kSnapshot, FileType::kIndex, FileType::kPack}) {
    const std::string dir = repo_dir + "/" + FileTypeDir(t);
    if (int err = MakeDir(dir)) FailErrno(err, "create folder", dir);
  }
  // restic's marker that the cache is in use (`cache --cleanup` removes old ones).
  ::utimensat(AT_FDCWD, repo_dir.c_str(), nullptr, 0);

  WriterLock lock(cfg_mu_);
  repo_dir_ = repo_dir;
}

void CacheBackend::SetTreePackPredicate(std::function<bool(const std::string&)> is_tree_pack) {
  WriterLock lock(cfg_mu_);
  is_tree_pack_ = std::move(is_tree_pack);
}

void CacheBackend::NoteTreePack(const std::string& name) {
  MutexLock lock(noted_mu_);
  noted_tree_packs_.insert(name);
}

void CacheBackend::SetWarningHandler(std::function<void(const std::string&)> warn) {
  WriterLock lock(cfg_mu_);
  warn_ = std::move(warn);
}

std::function<bool(const std::string&)> CacheBackend::HeldUnder(const std::string& base_dir,
                                                               FileType t) {
  std::vector<std::string> dirs;  // <base>/<id>/<type folder>
  if (DIR* d = opendir(base_dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string id = e->d_name;
      if (id.size() == 64 && IsValidObjectName(id))
        dirs.push_back(base_dir + "/" + id + "/" + FileTypeDir(t));
    }
    closedir(d);
  }
  return [dirs = std::move(dirs)](const std::string& name) {
    if (name.size() < 2 || !IsValidObjectName(name)) return false;
    struct stat st;
    for (const std::string& dir : dirs)
      if (stat((dir + "/" + name.substr(0, 2) + "/" + name).c_str(), &st) == 0 &&
          S_ISREG(st.st_mode))
        return true;
    return false;
  };
}

std::string CacheBackend::RepoDir() const {
  ReaderLock lock(cfg_mu_);
  return repo_dir_;
}

std::string CacheBackend::PathIn(const std::string& repo_dir, const Handle& h) const {
  return repo_dir + "/" + FileTypeDir(h.type) + "/" + h.name.substr(0, 2) + "/" + h.name;
}

std::string CacheBackend::CachePath(const Handle& h) const {
  if (!IsCacheableType(h.type) || !IsValidObjectName(h.name)) return "";
  std::string repo_dir = RepoDir();
  if (repo_dir.empty()) return "";
  return PathIn(repo_dir, h);
}

void CacheBackend::Warn(const std::string& msg) {
  std::function<void(const std::string&)> warn;
  {
    ReaderLock lock(cfg_mu_);
    warn = warn_;
  }
  if (warn) {
    warn(msg);
  } else {
    std::fprintf(stderr, "warning: %s\n", msg.c_str());
  }
}

bool CacheBackend::IsCached(const Handle& h) {
  if (h.type == FileType::kSnapshot || h.type == FileType::kIndex) return true;
  if (h.type != FileType::kPack) return false;
  std::function<bool(const std::string&)> pred;
  {
    ReaderLock lock(cfg_mu_);
    if (!is_tree_pack_) return false;
    pred = is_tree_pack_;
  }
  return pred(h.name);
}

CacheBackend::CachedRead CacheBackend::ReadCached(const std::string& path, const Handle& h,
                                                  uint64_t offset, uint64_t length) {
  CachedRead r;
  if (h.type == FileType::kPack) {
    if (std::shared_ptr<const OpenFileCache::File> open = open_packs_.Get(path)) {
      uint64_t want;
      if (RangeFits(open->size, offset, length, &want)) {
        r = ReadOpenPack(*open, h, offset, want);
        if (r.status == CachedRead::kHit) return r;
      }
      // Reopened and checked again below (a damaged file is found and removed there).
      open_packs_.Drop(path);
      r = CachedRead();
    }
  }
  Fd fd(OpenNoIntr(path, O_RDONLY));
  files_opened_.fetch_add(1, std::memory_order_relaxed);
  if (fd.get() < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return r;  // not cached
    r.status = CachedRead::kBad;
    r.why = "open: " + ErrnoText(err);
    return r;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    r.status = CachedRead::kBad;
    r.why = "stat: " + ErrnoText(errno);
    return r;
  }
  r.have_id = true;
  r.dev = st.st_dev;
  r.ino = st.st_ino;
  auto bad = [&](std::string why) {
    r.status = CachedRead::kBad;
    r.why = std::move(why);
    r.data.clear();
    return std::move(r);
  };
  if (!S_ISREG(st.st_mode)) return bad("not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  auto read_err = [](int err) {
    return err < 0 ? std::string("file shrank while reading") : "read: " + ErrnoText(err);
  };

  if (h.type != FileType::kPack) {
    // Small files: read whole and verify against the name (= SHA-256 of the content).
    r.data.resize(size);
    if (int err = ReadAt(fd.get(), r.data.data(), size, 0)) return bad(read_err(err));
    if (Sha256(r.data).Hex() != h.name) return bad("content does not match its name");
    uint64_t want;
    if (!RangeFits(size, offset, length, &want)) FailCacheShortRead(h, offset, length, size);
    r.data = Slice(std::move(r.data), offset, want);
    r.status = CachedRead::kHit;
    return r;
  }

  // Packs: the trailer must describe a header that fits, and the range must fit. The
  // descriptor is kept open (open_packs_) for the next range of the same pack.
  uint64_t want;
  if (size < 4 + 32) return bad("too small for a pack (" + std::to_string(size) + " bytes)");
  if (!RangeFits(size, offset, length, &want))
    return bad("too short (" + std::to_string(size) + " bytes) for the requested range");
  uint8_t trailer[4];
  if (int err = ReadAt(fd.get(), trailer, 4, size - 4)) return bad(read_err(err));
  uint64_t header_len = GetU32Le(trailer);
  if (header_len < 32 || header_len + 4 > size) return bad("invalid pack trailer");
  auto file = std::make_shared<OpenFileCache::File>();
  file->fd = std::move(fd);
  file->size = size;
  file->dev = st.st_dev;
  file->ino = st.st_ino;
  r = ReadOpenPack(*file, h, offset, want);
  if (r.status == CachedRead::kHit) open_packs_.Put(path, std::move(file));
  return r;
}

CacheBackend::CachedRead CacheBackend::ReadOpenPack(const OpenFileCache::File& file,
                                                    const Handle& h, uint64_t offset,
                                                    uint64_t want) {
  CachedRead r;
  r.have_id = true;
  r.dev = file.dev;
  r.ino = file.ino;
  r.data.resize(want);
  if (int err = ReadAt(file.fd.get(), r.data.data(), want, offset)) {
    r.status = CachedRead::kBad;
    r.why = err < 0 ? std::string("file shrank while reading") : "read: " + ErrnoText(err);
    r.data.clear();
    return r;
  }
  if (want == file.size && Sha256(r.data).Hex() != h.name) {
    r.status = CachedRead::kBad;
    r.why = "content does not match its name";
    r.data.clear();
    return r;
  }
  r.status = CachedRead::kHit;
  return r;
}

void CacheBackend::RemoveBadFile(const std::string& path, const CachedRead& bad) {
  open_packs_.Drop(path);
  if (bad.have_id) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return;  // already gone
    if (st.st_dev != bad.dev || st.st_ino != bad.ino) return;  // replaced meanwhile
  }
  std::string msg = "cache: removing damaged " + path + " (" + bad.why + ")";
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    msg += ", failed: " + ErrnoText(errno);
  Warn(msg);
}

void CacheBackend::WriteCacheFile(const std::string& path, const Handle& h, ByteView data) {
  const std::string dir = DirOf(path);
  int err = MakeDir(dir);
  if (err == ENOENT) {  // the type folder was removed: recreate it as well
    err = MakeDir(DirOf(dir));
    if (!err) err = MakeDir(dir);
  }
  open_packs_.Drop(path);  // replaced below
  if (!err) err = WriteFileAtomic(path, data, kFileMode, true);
  if (err) Warn("cache: cannot store " + h.ToString() + " in " + path + ": " + ErrnoText(err));
}

Bytes CacheBackend::LoadThroughCache(const std::string& path, const Handle& h, uint64_t offset,
                                     uint64_t length) {
  CachedRead r = ReadCached(path, h, offset, length);
  if (r.status == CachedRead::kHit) return std::move(r.data);
  InFlightLock guard(this, path);
  if (r.status == CachedRead::kBad) RemoveBadFile(path, r);
  // Another thread may have stored it while this one waited for the lock.
  r = ReadCached(path, h, offset, length);
  if (r.status == CachedRead::kHit) return std::move(r.data);
  if (r.status == CachedRead::kBad) RemoveBadFile(path, r);

  Bytes all = inner_->Load(h);
  if (Sha256(all).Hex() == h.name) {
    WriteCacheFile(path, h, all);
  } else {
    Warn("cache: not caching " + h.ToString() + ": content does not match its name");
  }
  uint64_t want;
  if (!RangeFits(all.size(), offset, length, &want)) FailCacheShortRead(h, offset, length, all.size());
  return Slice(std::move(all), offset, want);
}

Bytes CacheBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  if (!IsCacheableType(h.type)) return inner_->Load(h, offset, length);
  std::string repo_dir = RepoDir();
  if (repo_dir.empty()) return inner_->Load(h, offset, length);
  CheckHandle(h);
  if (!IsCached(h)) return inner_->Load(h, offset, length);
  return LoadThroughCache(PathIn(repo_dir, h), h, offset, length);
}

void CacheBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  if (!IsCacheableType(h.type) || RepoDir().empty()) return inner_->LoadInto(h, offset, out);
  CheckHandle(h);
  if (!IsCached(h)) return inner_->LoadInto(h, offset, out);
  Backend::LoadInto(h, offset, out);  // through Load: the cached file, or fetched whole
}

void CacheBackend::LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                              const std::function<void(ByteView)>& sink) {
  if (!IsCacheableType(h.type) || RepoDir().empty())
    return inner_->LoadStream(h, offset, length, sink);
  CheckHandle(h);
  if (!IsCached(h)) return inner_->LoadStream(h, offset, length, sink);
  Backend::LoadStream(h, offset, length, sink);  // through Load, as LoadInto
}

void CacheBackend::Save(const Handle& h, ByteView data) {
  bool noted = false;
  if (h.type == FileType::kPack) {
    MutexLock lock(noted_mu_);
    noted = noted_tree_packs_.erase(h.name) > 0;
  }
  inner_->Save(h, data);
  if (!IsCacheableType(h.type)) return;
  std::string repo_dir = RepoDir();
  if (repo_dir.empty()) return;
  if (!noted && !IsCached(h)) return;
  // The name is the content's SHA-256; never cache bytes that would not verify.
  if (Sha256(data).Hex() != h.name) {
    Warn("cache: not caching " + h.ToString() + ": content does not match its name");
    return;
  }
  const std::string path = PathIn(repo_dir, h);
  InFlightLock guard(this, path);
  WriteCacheFile(path, h, data);
}

void CacheBackend::Forget(const Handle& h) {
  const std::string path = CachePath(h);
  if (path.empty()) return;
  InFlightLock guard(this, path);
  open_packs_.Drop(path);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    Warn("cache: cannot remove " + path + ": " + ErrnoText(errno));
}

void CacheBackend::Remove(const Handle& h) {
  CheckHandle(h);
  if (h.type == FileType::kPack) {
    MutexLock lock(noted_mu_);
    noted_tree_packs_.erase(h.name);
  }
  try {
    inner_->Remove(h);
  } catch (...) {
    Forget(h);
    throw;
  }
  Forget(h);
}

void CacheBackend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  std::string repo_dir = IsCacheableType(t) ? RepoDir() : std::string();
  if (repo_dir.empty()) {
    inner_->List(t, fn);
    return;
  }
  // Names cached before the listing starts; whatever the listing does not report is gone
  // from the repository. Files cached meanwhile are not candidates, so they survive.
  std::set<std::string> stale;
  const std::string type_dir = repo_dir + "/" + FileTypeDir(t);
  for (const std::string& sub : ReadDirNames(type_dir)) {
    if (!IsHex2(sub)) continue;
    for (const std::string& name : ReadDirNames(type_dir + "/" + sub)) {
      if (IsValidObjectName(name) && name.compare(0, 2, sub) == 0) {
        stale.insert(name);
      } else if (name.find("-tmp-") != std::string::npos) {
        const std::string p = type_dir + "/" + sub + "/" + name;
        struct stat st;
        if (::stat(p.c_str(), &st) == 0 && st.st_mtime + kStaleTempSeconds < ::time(nullptr))
          ::unlink(p.c_str());
      }
    }
  }
  inner_->List(t, [&](const FileInfo& fi) {
    if (!stale.empty()) stale.erase(fi.name);
    fn(fi);
  });
  CleanType(repo_dir, t, stale);
}

void CacheBackend::CleanType(const std::string& repo_dir, FileType t,
                             const std::set<std::string>& remove) {
  for (const std::string& name : remove) {
    const std::string path = PathIn(repo_dir, Handle{t, name});
    InFlightLock guard(this, path);
    open_packs_.Drop(path);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      Warn("cache: cannot remove " + path + ": " + ErrnoText(errno));
  }
}

}  // namespace haven
