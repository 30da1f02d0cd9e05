#include "capture/apply.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "capture/capture.h"
#include "capture/fs.h"
#include "repo/tree_path.h"
#include "chunker/chunker.h"
#include "core/deep_stack.h"
#include "core/error.h"
#include "restorer/restorer.h"

namespace haven::capture {

namespace {

class Apply {
 public:
  Apply(IndexedRepository& repo, const ApplyOptions& o, std::string captured_home)
      : repo_(repo), o_(o), captured_home_(std::move(captured_home)) {}

  ApplyResult Run(const BlobId& root) {
    root_fd_ = open(o_.target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root_fd_ < 0) Fail(ErrorCode::kInvalidArgument, "apply: target " + o_.target + ": " + strerror(errno));
    try {
      RunOnDeepStack([&] { Tree(root, ""); });  // one recursion per level, up to kMaxDepth
    } catch (...) {
      close(root_fd_);
      throw;
    }
    close(root_fd_);
    return r_;
  }

 private:
  void Act(const std::string& s) {
    if (o_.action) o_.action(s);
  }
  void Problem(const std::string& s, bool refused) {
    (refused ? r_.refused : r_.errors)++;
    if (o_.warn) o_.warn(s);
  }

  // Destination (relative to the target, without a leading /) of a snapshot path.
  std::string Dest(const std::string& snap_path) const {
    if (!captured_home_.empty() && !o_.home.empty() &&
        (snap_path == captured_home_ || snap_path.starts_with(captured_home_ + "/")))
      return o_.home + snap_path.substr(captured_home_.size());
    return snap_path;
  }

  // Opens (creating when missing, unless dry-run) the directory `rel` under the target
  // without following symlinks. -1 with a message when it cannot.
  int OpenDir(const std::vector<std::string>& comps, size_t n, bool create, std::string* why,
              bool* missing) {
    int fd = dup(root_fd_);
    *missing = false;
    for (size_t i = 0; i < n; ++i) {
      const std::string& c = comps[i];
      if (!SafeNodeName(c)) {
        close(fd);
        *why = "unsafe path component \"" + c + "\"";
        return -1;
      }
      int next = openat(fd, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0 && errno == ENOENT) {
        if (!create) {
          *missing = true;
          close(fd);
          return -1;
        }
        std::string sofar;
        for (size_t k = 0; k <= i; ++k) sofar += "/" + comps[k];
        auto mode = dir_modes_.find(sofar);
        mode_t m = mode == dir_modes_.end() ? 0755 : mode->second;
        if (mkdirat(fd, c.c_str(), m) != 0 && errno != EEXIST) {
          *why = std::string("mkdir: ") + strerror(errno);
          close(fd);
          return -1;
        }
        next = openat(fd, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (next < 0) {
        *why = errno == ELOOP || errno == ENOTDIR
                   ? "a path component is a symlink or not a directory (would leave the target)"
                   : std::string(strerror(errno));
        close(fd);
        return -1;
      }
      close(fd);
      fd = next;
    }
    return fd;
  }

  // Deeper trees are refused (a crafted snapshot must not exhaust the stack).
  static constexpr int kMaxDepth = kMaxTreeDepth;

  void Tree(const BlobId& id, const std::string& snap_dir, int depth = 0) {
    if (depth >= kMaxDepth) {
      Problem("apply: refusing " + snap_dir + ": nested deeper than " + std::to_string(kMaxDepth) +
                  " directories",
              true);
      return;
    }
    for (const Node& n : repo_.LoadTree(id)) {
      std::string snap_path = snap_dir + "/" + n.name;
      if (!SafeNodeName(n.name)) {
        Problem("apply: refusing unsafe name in " + (snap_dir.empty() ? "/" : snap_dir), true);
        continue;
      }
      if (snap_path == "/.haven") continue;
      if (n.type == NodeType::kDir) {
        dir_modes_[Dest(snap_path)] = PosixPermFromGoMode(n.mode);  // for directories created
        if (n.subtree) Tree(*n.subtree, snap_path, depth + 1);
        DirMetadata(n, snap_path);  // after its children: writing them moved its mtime
        continue;
      }
      if (n.type != NodeType::kFile && n.type != NodeType::kSymlink) continue;
      Entry(n, snap_path);
    }
  }

  void Entry(const Node& n, const std::string& snap_path) {
    std::string dest = Dest(snap_path);
    std::string shown = (o_.target == "/" ? "" : o_.target) + dest;
    auto comps = SplitTreePath(dest);
    if (comps.empty()) return;
    for (const auto& c : comps)
      if (!SafeNodeName(c)) {
        Problem("apply: refusing " + shown + ": unsafe path component", true);
        return;
      }
    std::string why;
    bool missing = false;
    int dfd = OpenDir(comps, comps.size() - 1, !o_.dry_run, &why, &missing);
    const std::string& name = comps.back();
    struct stat st;
    bool exists = false;
    if (dfd >= 0) {
      exists = fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    } else if (!missing) {
      Problem("apply: refusing " + shown + ": " + why, true);
      return;
    }
    if (exists && S_ISDIR(st.st_mode)) {
      close(dfd);
      Problem("apply: " + shown + " is a directory here; left alone", true);
      return;
    }
    bool same = exists && Same(dfd, name, st, n);
    if (same) {
      r_.unchanged++;
      if (dfd >= 0) close(dfd);
      return;
    }
    Act(std::string(exists ? "update " : "create ") + shown +
        (exists && !o_.no_backup ? " (old copy kept as " + name + ".haven-orig)" : ""));
    exists ? r_.updated++ : r_.created++;
    if (o_.dry_run) {
      if (dfd >= 0) close(dfd);
      return;
    }
    try {
      Write(dfd, name, n, exists);
    } catch (const Error& e) {
      Problem("apply: " + shown + ": " + e.what(), false);
    }
    close(dfd);
  }

  // A tracked directory's xattrs and times, once its entries are written. The directories
  // above the tracked paths are stored with zero times (stable_intermediate_dirs): left as
  // they are. Nothing happens to a directory that does not exist (nothing was put in it).
  void DirMetadata(const Node& n, const std::string& snap_path) {
    if (o_.dry_run || (n.mtime.sec == 0 && n.mtime.nsec == 0)) return;
    auto comps = SplitTreePath(Dest(snap_path));
    if (comps.empty()) return;
    std::string why;
    bool missing = false;
    int fd = OpenDir(comps, comps.size(), false, &why, &missing);
    if (fd < 0) return;
    std::string shown = (o_.target == "/" ? "" : o_.target) + Dest(snap_path);
    SetXattrs(fd, n, shown);
    struct timespec ts[2] = {n.atime.ToTimespec(), n.mtime.ToTimespec()};
    if (futimens(fd, ts) != 0 && o_.warn) o_.warn("apply: utimes " + shown + ": " + strerror(errno));
    close(fd);
  }

  // The node's extended attributes on an open file or directory; a file system without
  // them (ENOTSUP) or a namespace we may not write (EPERM: trusted.*, security.*) is skipped.
  void SetXattrs(int fd, const Node& n, const std::string& shown) {
    for (const Xattr& x : n.xattrs) {
      const std::string& v = x.value ? *x.value : std::string();
      if (fsetxattr(fd, x.name.c_str(), v.data(), v.size(), 0) != 0 && errno != ENOTSUP &&
          errno != EPERM && o_.warn)
        o_.warn("apply: setxattr " + x.name + " on " + shown + ": " + strerror(errno));
    }
  }

  // The file's extended attributes equal the node's (the ones the node lists).
  static bool SameXattrs(int fd, const Node& n) {
    for (const Xattr& x : n.xattrs) {
      const std::string& want = x.value ? *x.value : std::string();
      std::string got(want.size() + 1, '\0');
      ssize_t k = fgetxattr(fd, x.name.c_str(), got.data(), got.size());
      if (k < 0 || std::string_view(got.data(), static_cast<size_t>(k)) != want) return false;
    }
    return true;
  }

  bool Same(int dfd, const std::string& name, const struct stat& st, const Node& n) {
    if (n.type == NodeType::kSymlink) {
      if (!S_ISLNK(st.st_mode)) return false;
      std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t k = readlinkat(dfd, name.c_str(), buf.data(), buf.size());
      return k >= 0 && std::string(buf.data(), static_cast<size_t>(k)) == n.linktarget;
    }
    if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != n.size) return false;
    if ((st.st_mode & 07777) != PosixPermFromGoMode(n.mode)) return false;
    int fd = openat(dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    if (!SameXattrs(fd, n)) {
      close(fd);
      return false;
    }
    std::string bytes;
    char buf[1 << 16];
    ssize_t k;
    while ((k = read(fd, buf, sizeof(buf))) > 0) bytes.append(buf, static_cast<size_t>(k));
    close(fd);
    std::vector<BlobId> ids;
    size_t off = 0;
    for (size_t len : chunker::ChunkLengths(repo_.chunker_tables(), AsBytes(bytes))) {
      ids.emplace_back(Sha256(AsBytes(std::string_view(bytes).substr(off, len))));
      off += len;
    }
    return ids == n.content;
  }

  void Write(int dfd, const std::string& name, const Node& n, bool exists) {
    std::string tmp = "." + name + ".haven-tmp-" + std::to_string(getpid());
    if (tmp.size() > 255) tmp = ".haven-tmp-" + std::to_string(getpid());
    unlinkat(dfd, tmp.c_str(), 0);
    if (n.type == NodeType::kSymlink) {
      if (symlinkat(n.linktarget.c_str(), dfd, tmp.c_str()) != 0)
        Fail(ErrorCode::kIo, std::string("symlink: ") + strerror(errno));
      (void)fchownat(dfd, tmp.c_str(), n.uid, n.gid, AT_SYMLINK_NOFOLLOW);  // EPERM unless root
      struct timespec ts[2] = {n.atime.ToTimespec(), n.mtime.ToTimespec()};
      utimensat(dfd, tmp.c_str(), ts, AT_SYMLINK_NOFOLLOW);
    } else {
      int fd = openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0) Fail(ErrorCode::kIo, std::string("create: ") + strerror(errno));
      try {
        WriteFileContent(repo_, fd, n.content);
      } catch (...) {
        close(fd);
        unlinkat(dfd, tmp.c_str(), 0);
        throw;
      }
      (void)fchown(fd, n.uid, n.gid);  // EPERM unless root: the caller's owner stays
      SetXattrs(fd, n, name);
      fchmod(fd, PosixPermFromGoMode(n.mode));
      struct timespec ts[2] = {n.atime.ToTimespec(), n.mtime.ToTimespec()};
      futimens(fd, ts);
      bool ok = fsync(fd) == 0;
      ok = close(fd) == 0 && ok;
      if (!ok) {
        unlinkat(dfd, tmp.c_str(), 0);
        Fail(ErrorCode::kIo, std::string("write: ") + strerror(errno));
      }
    }
    if (exists && !o_.no_backup) {
      std::string orig = name + ".haven-orig";
      struct stat ost;
      if (fstatat(dfd, orig.c_str(), &ost, AT_SYMLINK_NOFOLLOW) != 0 &&
          linkat(dfd, name.c_str(), dfd, orig.c_str(), 0) != 0) {
        int e = errno;
        unlinkat(dfd, tmp.c_str(), 0);
        Fail(ErrorCode::kIo, "cannot keep " + orig + ": " + strerror(e));
      }
    }
    if (renameat(dfd, tmp.c_str(), dfd, name.c_str()) != 0) {
      int e = errno;
      unlinkat(dfd, tmp.c_str(), 0);
      Fail(ErrorCode::kIo, std::string("rename: ") + strerror(e));
    }
    fsync(dfd);
  }

  IndexedRepository& repo_;
  const ApplyOptions& o_;
  std::string captured_home_;
  int root_fd_ = -1;
  ApplyResult r_;
  std::map<std::string, mode_t> dir_modes_;  // destination dir -> its captured mode
};

}  // namespace

std::string CapturedHome(const Snapshot& snap) {
  for (const auto& t : snap.tags)
    if (t.starts_with(kHomeTagPrefix)) return t.substr(std::string_view(kHomeTagPrefix).size());
  return "";
}

ApplyResult RunApply(IndexedRepository& repo, const Snapshot& snap, const ApplyOptions& opts) {
  Apply a(repo, opts, CapturedHome(snap));
  return a.Run(snap.tree);
}

}  // namespace haven::capture
