// libfuse3 low-level glue for MountFs (see fuse_mount.h).
#define FUSE_USE_VERSION 34
#include "mount/fuse_mount.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/error.h"

namespace haven::mount {

namespace {

constexpr double kTimeout = 60;  // entry and attribute validity (bazil's default, restic's reload)

MountFs& Fs(fuse_req_t req) { return *static_cast<MountFs*>(fuse_req_userdata(req)); }

struct timespec Ts(const gojson::Timestamp& t) { return t.ToTimespec(); }

struct stat ToStat(const Attr& a) {
  struct stat st{};
  st.st_ino = a.ino;
  st.st_mode = a.mode;
  st.st_nlink = a.nlink;
  st.st_uid = a.uid;
  st.st_gid = a.gid;
  st.st_size = static_cast<off_t>(std::min<uint64_t>(a.size, INT64_MAX));  // a crafted size
  st.st_blocks = static_cast<blkcnt_t>(a.blocks);
  st.st_blksize = a.blksize;
  st.st_atim = Ts(a.atime);
  st.st_mtim = Ts(a.mtime);
  st.st_ctim = Ts(a.ctime);
  return st;
}

// Runs one request; FsError answers with its errno, a repository failure with EIO (and a
// line on stderr: the kernel only passes the errno on).
template <typename F>
void Guard(fuse_req_t req, const char* op, F&& f) {
  try {
    f();
  } catch (const FsError& e) {
    fuse_reply_err(req, e.err);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mount: %s: %s\n", op, e.what());
    fuse_reply_err(req, EIO);
  }
}

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guard(req, "lookup", [&] {
    const auto node = Fs(req).Lookup(parent, name);
    if (!node) return (void)fuse_reply_err(req, ENOENT);
    fuse_entry_param e{};
    e.ino = *node;
    e.generation = 1;
    try {
      e.attr = ToStat(Fs(req).GetAttr(*node));
    } catch (...) {
      Fs(req).Forget(*node, 1);  // no reply with the node: no reference
      throw;
    }
    e.attr_timeout = e.entry_timeout = kTimeout;
    // A reply the kernel did not take adds no reference.
    if (fuse_reply_entry(req, &e) != 0) Fs(req).Forget(*node, 1);
  });
}

// The kernel evicted the node: the model frees it (and its loaded tree) at zero references.
void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  Fs(req).Forget(ino, nlookup);
  fuse_reply_none(req);
}

void OpForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; i++) Fs(req).Forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Guard(req, "getattr", [&] {
    const struct stat st = ToStat(Fs(req).GetAttr(ino));
    fuse_reply_attr(req, &st, kTimeout);
  });
}

void OpReadlink(fuse_req_t req, fuse_ino_t ino) {
  Guard(req, "readlink", [&] { fuse_reply_readlink(req, Fs(req).ReadLink(ino).c_str()); });
}

using FileHandle = std::shared_ptr<const OpenFile>;

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guard(req, "open", [&] {
    if ((fi->flags & O_ACCMODE) != O_RDONLY) return (void)fuse_reply_err(req, EROFS);
    auto handle = std::make_unique<FileHandle>(Fs(req).Open(ino));
    fi->fh = reinterpret_cast<uint64_t>(handle.get());
    fi->keep_cache = 1;  // contents never change
    if (fuse_reply_open(req, fi) == 0) handle.release();
  });
}

void OpRead(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  Guard(req, "read", [&] {
    const auto& f = *reinterpret_cast<FileHandle*>(fi->fh);
    thread_local std::vector<uint8_t> buf;
    if (buf.size() < size) buf.resize(size);
    const size_t n = Fs(req).Read(*f, static_cast<uint64_t>(off), size, buf.data());
    fuse_reply_buf(req, reinterpret_cast<const char*>(buf.data()), n);
  });
}

void OpRelease(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  delete reinterpret_cast<FileHandle*>(fi->fh);
  fuse_reply_err(req, 0);
}

using DirHandle = std::vector<DirEntry>;

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guard(req, "opendir", [&] {
    auto handle = std::make_unique<DirHandle>(Fs(req).ReadDir(ino));
    fi->fh = reinterpret_cast<uint64_t>(handle.get());
    if (fuse_reply_open(req, fi) == 0) handle.release();
  });
}

void OpReaddir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  const auto& entries = *reinterpret_cast<DirHandle*>(fi->fh);
  std::vector<char> buf(size);
  size_t pos = 0;
  for (size_t i = static_cast<size_t>(off); i < entries.size(); i++) {
    struct stat st{};
    st.st_ino = entries[i].ino;
    st.st_mode = entries[i].type;
    const size_t need = fuse_add_direntry(req, buf.data() + pos, size - pos,
                                          entries[i].name.c_str(), &st, static_cast<off_t>(i + 1));
    if (need > size - pos) break;
    pos += need;
  }
  fuse_reply_buf(req, buf.data(), pos);
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  delete reinterpret_cast<DirHandle*>(fi->fh);
  fuse_reply_err(req, 0);
}

// Answers an xattr request for `value`: its size when asked with size 0, ERANGE when it
// does not fit, else the bytes.
void ReplyXattr(fuse_req_t req, const std::string& value, size_t size) {
  if (size == 0) return (void)fuse_reply_xattr(req, value.size());
  if (size < value.size()) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, value.data(), value.size());
}

void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  Guard(req, "listxattr", [&] {
    std::string names;
    for (const auto& n : Fs(req).ListXattr(ino)) names += n + '\0';
    ReplyXattr(req, names, size);
  });
}

void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  Guard(req, "getxattr", [&] { ReplyXattr(req, Fs(req).GetXattr(ino, name), size); });
}

const fuse_lowlevel_ops kOps = [] {
  fuse_lowlevel_ops ops{};
  ops.lookup = OpLookup;
  ops.forget = OpForget;
  ops.forget_multi = OpForgetMulti;
  ops.getattr = OpGetattr;
  ops.readlink = OpReadlink;
  ops.open = OpOpen;
  ops.read = OpRead;
  ops.release = OpRelease;
  ops.opendir = OpOpendir;
  ops.readdir = OpReaddir;
  ops.releasedir = OpReleasedir;
  ops.listxattr = OpListxattr;
  ops.getxattr = OpGetxattr;
  return ops;
}();

// A lazy unmount (a shell inside the mount does not keep it): umount2 as root, else
// fusermount3 -u -z as libfuse does for an unprivileged mount. Errors are left to the
// caller's exit (the process owning the session ending unmounts it too).
void DetachMount(const std::string& mountpoint) {
  if (::umount2(mountpoint.c_str(), MNT_DETACH) == 0 || errno == EINVAL) return;
  const char* argv[] = {"fusermount3", "-u", "-z", "-q", "--", mountpoint.c_str(), nullptr};
  pid_t pid = -1;
  if (::posix_spawnp(&pid, "fusermount3", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0)
    return;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

FuseMount::FuseMount(MountFs& fs, FuseOptions o) : fs_(fs), o_(std::move(o)) {}

FuseMount::~FuseMount() {
  Stop();
  MutexLock l(mu_);
  if (se_) {  // mounted but never served (Loop did not run)
    fuse_session_unmount(se_);
    fuse_session_destroy(se_);
    se_ = nullptr;
  }
}

void FuseMount::Mount() {
  std::string opts = "ro,fsname=" + o_.fsname;
  if (o_.allow_other) opts += ",allow_other";
  if (o_.default_permissions) opts += ",default_permissions";
  std::vector<std::string> argv_s = {"haven", "-o", opts};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  fuse_session* se = fuse_session_new(&args, &kOps, sizeof(kOps), &fs_);
  // fuse_session_new may copy the arguments into its own list (args.allocated) and keeps
  // nothing of them: free that list (LeakSanitizer found it in make asan).
  fuse_opt_free_args(&args);
  if (!se) Fail(ErrorCode::kFatal, "cannot start a FUSE session (options " + opts + ")");
  if (fuse_session_mount(se, o_.mountpoint.c_str()) != 0) {
    fuse_session_destroy(se);
    Fail(ErrorCode::kFatal, "cannot mount at " + o_.mountpoint +
                                " (see the line above; is /dev/fuse there and is fusermount3 installed?)");
  }
  {
    MutexLock l(mu_);
    se_ = se;
    mounted_ = true;
  }
}

void FuseMount::Loop() {
  fuse_session* se;
  {
    MutexLock l(mu_);
    se = se_;
  }
  if (!se) Fail(ErrorCode::kFatal, "not mounted");
  fuse_loop_config cfg{};
  cfg.clone_fd = 0;
  cfg.max_idle_threads = 10;
  const int rc = fuse_session_loop_mt(se, &cfg);
  MutexLock l(mu_);
  mounted_ = false;
  // The workers are joined: closing the session's descriptor cannot pull it from under a
  // read now (after a detach by Stop or an outside umount this only closes it).
  fuse_session_unmount(se_);
  fuse_session_destroy(se_);
  se_ = nullptr;
  if (rc < 0 && rc != -ENODEV)
    Fail(ErrorCode::kIo, "FUSE session at " + o_.mountpoint + " ended: " + std::strerror(-rc));
}

void FuseMount::Stop() {
  MutexLock l(mu_);
  if (!mounted_) return;
  mounted_ = false;
  fuse_session_exit(se_);
  // Unmounted through the kernel, not by fuse_session_unmount: that closes the session's
  // descriptor, which the loop's workers may be blocked reading (make tsan saw the close
  // race their read; the number could even be reused under them before the process
  // exits). The kernel ends their reads with ENODEV; Loop (or the exit) closes it after.
  DetachMount(o_.mountpoint);
}

}  // namespace haven::mount
