#include "backend/local_backend.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "backend/posix_io.h"
#include "core/error.h"
#include "core/interrupt.h"

namespace haven {
namespace {

using namespace posix;  // NOLINT(google-build-using-namespace): this file is its user

constexpr mode_t kDirMode = 0700;
constexpr mode_t kTempFileMode = 0600;
constexpr mode_t kFinalFileMode = 0400;  // restic makes stored files read-only

// errno values that a retry cannot fix. Anything else (EIO, ESTALE, ETIMEDOUT, EAGAIN,
// EMFILE, ENOMEM, ...) may be transient, notably on network file systems.
bool IsPermanentErrno(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EROFS:
    case EACCES:
    case EPERM:
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
    case EINVAL:
    case EEXIST:
    case EXDEV:
    case EBADF:
      return true;
    default:
      return false;
  }
}

[[noreturn]] void FailErrno(int err, std::string_view what, const std::string& path) {
  std::string msg = "local backend: ";
  msg += what;
  msg += ' ';
  msg += path;
  msg += ": ";
  msg += std::system_category().message(err);
  Fail(ErrorCode::kIo, std::move(msg), !IsPermanentErrno(err));
}

[[noreturn]] void FailNotFound(const std::string& path) {
  Fail(ErrorCode::kNotFound, "local backend: " + path + " does not exist");
}





// A temp file, created (O_EXCL) by the constructor and unlinked on destruction unless
// Release()d (after the rename). Ctrl-C, SIGTERM and SIGHUP remove it too (the other
// threads may be mid-write): the file is created inside its interrupt registration, so no
// cleanup pass can run between the two and miss it.
class TempFile {
 public:
  explicit TempFile(std::string path)
      : path_(std::move(path)),
        on_interrupt_([p = path_] { ::unlink(p.c_str()); },
                      [this] {
                        fd_ = Fd(OpenNoIntr(path_, O_WRONLY | O_CREAT | O_EXCL, kTempFileMode));
                        open_errno_ = errno;
                        return fd_.get() >= 0;
                      }) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!on_interrupt_.registered()) return;  // never created
    if (fd_.get() >= 0) fd_.Close();
    if (!released_) ::unlink(path_.c_str());
  }

  bool created() const { return on_interrupt_.registered(); }
  int open_errno() const { return open_errno_; }  // when !created()
  int fd() const { return fd_.get(); }
  int Close() { return fd_.Close(); }
  void Release() { released_ = true; }

 private:
  std::string path_;
  Fd fd_;
  int open_errno_ = 0;
  bool released_ = false;
  interrupt::Cleanup on_interrupt_;  // last: fd_ and path_ exist when it creates the file
};

std::unique_ptr<DIR, int (*)(DIR*)> OpenDir(const std::string& path) {
  DIR* d;
  do {
    d = ::opendir(path.c_str());
  } while (d == nullptr && errno == EINTR);
  return {d, &::closedir};
}

// fsync on a folder makes renames and unlinks in it durable. File systems that cannot
// sync folders (EINVAL/ENOTSUP) are accepted, as restic does.
void SyncDir(const std::string& dir) {
  Fd fd(OpenNoIntr(dir, O_RDONLY | O_DIRECTORY));
  if (fd.get() < 0) FailErrno(errno, "open folder", dir);
  if (FsyncNoIntr(fd.get()) != 0) {
    int err = errno;
    if (err == EINVAL || err == ENOTSUP || err == EOPNOTSUPP) return;
    FailErrno(err, "fsync folder", dir);
  }
}

// Creates one folder; an existing folder is fine, an existing non-folder is not.
void MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), kDirMode) == 0) return;
  int err = errno;
  if (err == EEXIST) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
    Fail(ErrorCode::kIo, "local backend: " + path + " exists and is not a folder");
  }
  FailErrno(err, "create folder", path);
}

// Like `mkdir -p` with mode 0700 for every folder it creates.
void MakeDirs(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), kDirMode) != 0 && errno != EEXIST) {
      FailErrno(errno, "create folder", prefix);
    }
  }
  MakeDir(path);
}


bool IsLowerHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// A data/XX folder name.
bool IsPackFolderName(std::string_view name) {
  return name.size() == 2 && IsLowerHexDigit(name[0]) && IsLowerHexDigit(name[1]);
}

std::string DirOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

// `length` 0 means "to the end".
[[noreturn]] void FailShortRead(const std::string& path, uint64_t offset, uint64_t length,
                                uint64_t actual_size) {
  std::string wanted = length == 0 ? std::string("data") : std::to_string(length) + " bytes";
  Fail(ErrorCode::kCorrupt, "local backend: short read of " + path + ": expected " + wanted +
                                " at offset " + std::to_string(offset) + ", file has " +
                                std::to_string(actual_size) + " bytes");
}

}  // namespace

LocalBackend::LocalBackend(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_.empty()) root_ = ".";
}

std::string LocalBackend::PathOf(const Handle& h) const {
  if (h.type == FileType::kConfig) return root_ + "/config";
  return root_ + "/" + h.ToString();
}

bool LocalBackend::Exists() {
  const std::string path = root_ + "/config";
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return true;
  int err = errno;
  if (err == ENOENT || err == ENOTDIR) return false;
  FailErrno(err, "stat", path);
}

void LocalBackend::Create() {
  if (Exists()) Fail(ErrorCode::kFatal, "local backend: config already exists in " + root_);
  MakeDirs(root_);
  for (FileType t :
       {FileType::kKey, FileType::kLock, FileType::kSnapshot, FileType::kIndex, FileType::kPack}) {
    MakeDir(root_ + "/" + FileTypeDir(t));
  }
  const std::string data = root_ + "/" + FileTypeDir(FileType::kPack);
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 256; ++i) {
    MakeDir(data + "/" + kHex[i >> 4] + kHex[i & 15]);
  }
  SyncDir(data);
  SyncDir(root_);
}

namespace {

// Creates "<dir>/<prefix>-tmp-<16 hex>" (O_EXCL, 0600); a missing `dir` is created when
// `may_create_dir` (data/XX and locks, which copy tools may drop).
std::unique_ptr<TempFile> CreateTemp(const std::string& dir, const std::string& prefix,
                                     bool may_create_dir, std::string* tmp_path) {
  bool created_dir = false;
  for (int attempt = 0;; ++attempt) {
    *tmp_path = dir + "/" + prefix + "-tmp-" + RandomSuffix();
    // From its creation on, every exit path removes it.
    auto tmp = std::make_unique<TempFile>(*tmp_path);
    if (tmp->created()) return tmp;
    int err = tmp->open_errno();
    if (err == EEXIST && attempt < 8) continue;
    if (err == ENOENT && may_create_dir && !created_dir) {
      MakeDir(dir);
      SyncDir(DirOf(dir));
      created_dir = true;
      continue;
    }
    FailErrno(err, "create temp file", *tmp_path);
  }
}

// Makes the written temp file read-only and durable, gives it its final name without
// replacing an existing object, and syncs the final folder. An existing object of `size`
// bytes is a retried save of the same content-addressed bytes: accepted (the temp file is
// then removed by ~TempFile); anything else is a conflict the caller must see.
void Publish(TempFile& tmp, const std::string& tmp_path, const std::string& final_path,
             uint64_t size, bool may_create_dir) {
  if (::fchmod(tmp.fd(), kFinalFileMode) != 0) FailErrno(errno, "chmod", tmp_path);
  if (FsyncNoIntr(tmp.fd()) != 0) FailErrno(errno, "fsync", tmp_path);
  if (int err = tmp.Close()) FailErrno(err, "close", tmp_path);

  auto check_existing = [&] {
    struct stat st;
    if (::stat(final_path.c_str(), &st) != 0) FailErrno(errno, "stat", final_path);
    if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) == size) return;
    Fail(ErrorCode::kFatal, "local backend: " + final_path + " already exists with size " +
                                std::to_string(st.st_size) + ", refusing to store " +
                                std::to_string(size) + " bytes under that name");
  };
  const std::string dir = DirOf(final_path);
  for (bool created_dir = false;;) {
    if (::renameat2(AT_FDCWD, tmp_path.c_str(), AT_FDCWD, final_path.c_str(),
                    RENAME_NOREPLACE) == 0)
      break;
    int err = errno;
    if (err == EEXIST) return check_existing();
    // A streamed pack's temp file lies in another data/XX than its name's, which a copy
    // tool may have dropped.
    if (err == ENOENT && may_create_dir && !created_dir && DirOf(tmp_path) != dir) {
      MakeDir(dir);
      SyncDir(DirOf(dir));
      created_dir = true;
      continue;
    }
    if (err != EINVAL && err != ENOSYS && err != ENOTSUP) FailErrno(err, "rename", tmp_path);
    // No RENAME_NOREPLACE on this file system: check, then rename. Two writers racing on one
    // name write the same content-addressed bytes, so the window is harmless.
    struct stat st;
    if (::stat(final_path.c_str(), &st) == 0) return check_existing();
    if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) FailErrno(errno, "rename", tmp_path);
    break;
  }
  tmp.Release();
  // The new name is durable once its folder is synced (a rename from another folder is one
  // journal transaction on ext4 and xfs: syncing the target commits both sides).
  SyncDir(dir);
}

// A data pack streamed into "data/XX/pack-tmp-<16 hex>" (XX random: the pack's name is
// known only at the end), renamed to data/YY/<name> by Commit.
class LocalPackStream : public PackStream {
 public:
  LocalPackStream(std::string root, std::string data_dir) : root_(std::move(root)) {
    tmp_ = CreateTemp(data_dir, "pack", /*may_create_dir=*/true, &tmp_path_);
  }
  void Append(ByteView data) override {
    if (int err = WriteAll(tmp_->fd(), data)) FailErrno(err, "write", tmp_path_);
    size_ += data.size();
  }
  void Commit(const std::string& name) override {
    Handle h{FileType::kPack, name};
    CheckHandle(h);
    Publish(*tmp_, tmp_path_, root_ + "/" + h.ToString(), size_, /*may_create_dir=*/true);
  }

 private:
  std::string root_;
  std::string tmp_path_;
  std::unique_ptr<TempFile> tmp_;
  uint64_t size_ = 0;
};

}  // namespace

void LocalBackend::Save(const Handle& h, ByteView data) {
  CheckHandle(h);
  const std::string final_path = PathOf(h);
  // Only folders that copy tools may have dropped are recreated (see the header).
  const bool may_create_dir = h.type == FileType::kPack || h.type == FileType::kLock;
  std::string tmp_path;
  std::unique_ptr<TempFile> tmp =
      CreateTemp(DirOf(final_path), final_path.substr(final_path.rfind('/') + 1),
                 may_create_dir, &tmp_path);
  if (int err = WriteAll(tmp->fd(), data)) FailErrno(err, "write", tmp_path);
  Publish(*tmp, tmp_path, final_path, data.size(), may_create_dir);
}

std::unique_ptr<PackStream> LocalBackend::NewPackStream() {
  const std::string suffix = RandomSuffix();
  return std::make_unique<LocalPackStream>(
      root_, root_ + "/" + FileTypeDir(FileType::kPack) + "/" + suffix.substr(0, 2));
}

namespace {

// Opens a stored file for reading; throws kNotFound when it is missing.
int OpenForRead(const std::string& path) {
  int fd = OpenNoIntr(path, O_RDONLY);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) FailNotFound(path);
    FailErrno(err, "open", path);
  }
  return fd;
}

// Checks that [offset, offset + length) lies inside the open file and returns the
// length, with 0 turned into "to the end".
uint64_t CheckRange(const Fd& fd, const std::string& path, uint64_t offset, uint64_t length) {
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) FailErrno(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) Fail(ErrorCode::kIo, "local backend: " + path + " is not a file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (offset > size) FailShortRead(path, offset, length, size);
  if (length == 0) length = size - offset;
  if (length > size - offset) FailShortRead(path, offset, length, size);
  return length;
}

void ReadRange(const Fd& fd, const std::string& path, uint8_t* out, uint64_t offset,
               uint64_t length) {
  if (int err = ReadAt(fd.get(), out, length, offset)) {
    if (err < 0)
      Fail(ErrorCode::kCorrupt, "local backend: short read of " + path + ": expected " +
                                    std::to_string(length) + " bytes at offset " +
                                    std::to_string(offset) + ", the file shrank while reading");
    FailErrno(err, "read", path);
  }
}

}  // namespace

Bytes LocalBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  CheckHandle(h);
  const std::string path = PathOf(h);
  Fd fd(OpenForRead(path));
  length = CheckRange(fd, path, offset, length);
  Bytes out(length);
  ReadRange(fd, path, out.data(), offset, length);
  return out;
}

void LocalBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  CheckHandle(h);
  if (out.empty()) return;
  const std::string path = PathOf(h);
  Fd fd(OpenForRead(path));
  CheckRange(fd, path, offset, out.size());
  ReadRange(fd, path, out.data(), offset, out.size());
}

std::optional<struct stat> LocalBackend::StatObject(const Handle& h) const {
  CheckHandle(h);
  const std::string path = PathOf(h);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) return std::nullopt;
    FailErrno(err, "stat", path);
  }
  if (!S_ISREG(st.st_mode)) Fail(ErrorCode::kIo, "local backend: " + path + " is not a file");
  return st;
}

std::optional<uint64_t> LocalBackend::Stat(const Handle& h) {
  if (auto st = StatObject(h)) return static_cast<uint64_t>(st->st_size);
  return std::nullopt;
}

std::optional<int64_t> LocalBackend::ModTime(const Handle& h) {
  if (auto st = StatObject(h)) return static_cast<int64_t>(st->st_mtim.tv_sec);
  return std::nullopt;
}

void LocalBackend::ListFolder(const std::string& dir, bool missing_ok,
                              const std::function<void(const FileInfo&)>& fn) const {
  std::vector<FileInfo> found;
  {
    auto d = OpenDir(dir);
    if (!d) {
      int err = errno;
      if (err == ENOENT && missing_ok) return;
      FailErrno(err, "list folder", dir);
    }
    for (;;) {
      errno = 0;
      const dirent* ent = ::readdir(d.get());
      if (ent == nullptr) {
        if (errno != 0) FailErrno(errno, "list folder", dir);
        break;
      }
      std::string_view name = ent->d_name;
      if (!IsValidObjectName(name)) continue;  // ".", "..", temp files, junk
      struct stat st;
      if (::fstatat(::dirfd(d.get()), ent->d_name, &st, 0) != 0) {
        int err = errno;
        if (err == ENOENT) continue;  // removed since readdir returned it
        FailErrno(err, "stat", dir + "/" + ent->d_name);
      }
      if (!S_ISREG(st.st_mode)) continue;
      found.push_back(FileInfo{std::string(name), static_cast<uint64_t>(st.st_size)});
    }
  }
  // The folder is closed before calling back, so fn may Remove or Save freely.
  for (const FileInfo& fi : found) fn(fi);
}

size_t LocalBackend::RemoveStaleTempFiles(int64_t min_age_seconds) {
  return StaleTempFiles(min_age_seconds, true);
}

size_t LocalBackend::CountStaleTempFiles(int64_t min_age_seconds) {
  return StaleTempFiles(min_age_seconds, false);
}

size_t LocalBackend::StaleTempFiles(int64_t min_age_seconds, bool remove) {
  std::vector<std::string> dirs;
  for (FileType t : {FileType::kKey, FileType::kLock, FileType::kSnapshot, FileType::kIndex})
    dirs.push_back(root_ + "/" + FileTypeDir(t));
  dirs.push_back(root_);  // config
  const std::string data = root_ + "/" + FileTypeDir(FileType::kPack);
  if (auto d = OpenDir(data)) {
    while (const dirent* ent = ::readdir(d.get()))
      if (IsPackFolderName(ent->d_name)) dirs.push_back(data + "/" + ent->d_name);
  }
  const time_t cutoff = ::time(nullptr) - min_age_seconds;
  size_t removed = 0;
  for (const std::string& dir : dirs) {
    auto d = OpenDir(dir);
    if (!d) continue;
    std::vector<std::string> stale;
    while (const dirent* ent = ::readdir(d.get())) {
      std::string_view name = ent->d_name;
      if (name.find("-tmp-") == std::string_view::npos) continue;
      struct stat st;
      if (::fstatat(::dirfd(d.get()), ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISREG(st.st_mode) && st.st_mtime < cutoff)
        stale.emplace_back(name);
    }
    for (const std::string& name : stale)
      if (!remove || ::unlinkat(::dirfd(d.get()), name.c_str(), 0) == 0) removed++;
  }
  return removed;
}

void LocalBackend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  if (t == FileType::kConfig) {
    if (auto size = Stat(Handle{FileType::kConfig, "config"})) fn(FileInfo{"config", *size});
    return;
  }
  const std::string dir = root_ + "/" + FileTypeDir(t);
  if (t != FileType::kPack) {
    ListFolder(dir, /*missing_ok=*/t == FileType::kLock, fn);
    return;
  }
  std::vector<std::string> subdirs;
  {
    auto d = OpenDir(dir);
    if (!d) FailErrno(errno, "list folder", dir);
    for (;;) {
      errno = 0;
      const dirent* ent = ::readdir(d.get());
      if (ent == nullptr) {
        if (errno != 0) FailErrno(errno, "list folder", dir);
        break;
      }
      if (IsPackFolderName(ent->d_name)) subdirs.push_back(dir + "/" + ent->d_name);
    }
  }
  // A data/XX that is not a folder fails here (ENOTDIR); one removed meanwhile is empty.
  for (const std::string& sub : subdirs) ListFolder(sub, /*missing_ok=*/true, fn);
}

void LocalBackend::Remove(const Handle& h) {
  CheckHandle(h);
  const std::string path = PathOf(h);
  if (::unlink(path.c_str()) != 0) {
    int err = errno;
    if (err == ENOENT) FailNotFound(path);
    FailErrno(err, "remove", path);
  }
  SyncDir(DirOf(path));
}

}  // namespace haven
