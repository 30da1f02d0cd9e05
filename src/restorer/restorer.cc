#include "restorer/restorer.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <map>
#include <mutex>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timings.h"
#include "repo/node.h"

namespace haven {

namespace {

bool AllZero(const uint8_t* p, size_t n) {
  static const uint8_t kZero[4096] = {};
  while (n >= sizeof(kZero)) {
    if (std::memcmp(p, kZero, sizeof(kZero)) != 0) return false;
    p += sizeof(kZero);
    n -= sizeof(kZero);
  }
  return std::memcmp(p, kZero, n) == 0;
}

bool SafeName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

struct timespec ToTimespec(const gojson::Timestamp& t) {
  struct timespec ts;
  ts.tv_sec = t.sec;
  ts.tv_nsec = t.nsec;
  return ts;
}

}  // namespace

uint64_t WriteFileContent(Repository& repo, int fd, const std::vector<BlobId>& content) {
  uint64_t off = 0;
  for (const BlobId& id : content) {
    Bytes b;
    {
      ScopedTimer t(Stage::kLoad);
      b = repo.LoadBlob(BlobType::kData, id);
    }
    ScopedTimer wt(Stage::kWrite);
    // Leave holes for 4 KiB-aligned runs of zeros.
    size_t pos = 0;
    while (pos < b.size()) {
      size_t n = std::min<size_t>(b.size() - pos, 4096);
      bool zero = n == 4096 && AllZero(b.data() + pos, n);
      if (!zero) {
        size_t end = pos + n;
        while (end < b.size()) {
          size_t m = std::min<size_t>(b.size() - end, 4096);
          if (m == 4096 && AllZero(b.data() + end, m)) break;
          end += m;
        }
        size_t done = 0;
        while (done < end - pos) {
          ssize_t w = pwrite(fd, b.data() + pos + done, end - pos - done,
                             static_cast<off_t>(off + pos + done));
          if (w < 0) {
            if (errno == EINTR) continue;
            Fail(ErrorCode::kIo, std::string("write: ") + strerror(errno));
          }
          done += static_cast<size_t>(w);
        }
        pos = end;
      } else {
        pos += n;
      }
    }
    off += b.size();
  }
  if (ftruncate(fd, static_cast<off_t>(off)) != 0)
    Fail(ErrorCode::kIo, std::string("truncate: ") + strerror(errno));
  return off;
}

namespace {

class Restore {
 public:
  Restore(Repository& repo, const RestoreOptions& opts)
      : repo_(repo), opts_(opts), pool_(ResolveJobs(opts.jobs), ResolveJobs(opts.jobs) * 4) {}

  RestoreResult Run(const BlobId& tree) {
    if (mkdir(opts_.target.c_str(), 0700) != 0 && errno != EEXIST)
      Fail(ErrorCode::kFatal, "cannot create target " + opts_.target + ": " + strerror(errno));
    RestoreTree(tree, opts_.target, "", opts_.includes.empty());
    for (auto& f : jobs_) f.get();
    // Directory metadata last. dirs_ lists every directory after its subdirectories
    // (post-order), so children get their metadata before their parent loses write or
    // search permission, and creating entries never touches a finished directory.
    for (const auto& [path, node] : dirs_) SetMetadata(path, node);
    std::sort(warnings_.begin(), warnings_.end());
    for (const auto& [path, msg] : warnings_)
      if (opts_.warn) opts_.warn(msg);
    return result_;
  }

 private:
  void Warn(const std::string& path, const std::string& msg) {
    std::lock_guard lock(mu_);
    warnings_.emplace_back(path, msg);
    result_.errors++;
  }

  bool Selected(const std::string& snap_path, bool is_dir, bool parent_included,
                bool* descend) {
    *descend = true;
    if (!opts_.excludes.empty() && opts_.excludes.Matches(snap_path)) {
      *descend = false;
      return false;
    }
    if (opts_.includes.empty() || parent_included) return true;
    if (opts_.includes.Matches(snap_path)) return true;
    if (is_dir && opts_.includes.ChildCouldMatch(snap_path)) return true;  // created for children
    *descend = is_dir;
    return false;
  }

  void RestoreTree(const BlobId& tree, const std::string& dir, const std::string& snap_dir,
                   bool included) {
    std::vector<Node> nodes;
    try {
      nodes = repo_.LoadTree(tree);
    } catch (const Error& e) {
      Warn(snap_dir, std::string("cannot load tree for ") + (snap_dir.empty() ? "/" : snap_dir) +
                         ": " + e.what());
      return;
    }
    for (Node& n : nodes) {
      if (!SafeName(n.name)) {
        Warn(snap_dir, "refusing node with unsafe name \"" + gojson::QuoteName(n.name) +
                           "\" in " + (snap_dir.empty() ? "/" : snap_dir));
        continue;
      }
      std::string snap_path = snap_dir + "/" + n.name;
      std::string path = dir + "/" + n.name;
      bool descend;
      bool self_included =
          !opts_.includes.empty() && !included && opts_.includes.Matches(snap_path);
      if (!Selected(snap_path, n.type == NodeType::kDir, included, &descend)) continue;
      RestoreNode(n, path, snap_path, included || opts_.includes.empty() || self_included);
    }
  }

  void RestoreNode(Node& n, const std::string& path, const std::string& snap_path,
                   bool included) {
    switch (n.type) {
      case NodeType::kDir: {
        if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
          Warn(snap_path, "mkdir " + path + ": " + strerror(errno));
          return;
        }
        result_.dirs++;
        if (n.subtree) RestoreTree(*n.subtree, path, snap_path, included);
        dirs_.emplace_back(path, n);
        return;
      }
      case NodeType::kFile: {
        if (!included) return;
        if (n.links > 1 && n.inode) {
          auto key = std::make_pair(n.device_id, n.inode);
          auto it = hardlinks_.find(key);
          if (it != hardlinks_.end()) {
            unlink(path.c_str());
            if (link(it->second.c_str(), path.c_str()) == 0) {
              result_.files++;
              return;
            }
            Warn(snap_path, "link " + path + ": " + strerror(errno) + ", restoring a copy");
          } else {
            hardlinks_[key] = path;
          }
        }
        unlink(path.c_str());
        int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
          Warn(snap_path, "create " + path + ": " + strerror(errno));
          return;
        }
        result_.files++;
        jobs_.push_back(pool_.Submit([this, fd, path, snap_path, node = n] {
          try {
            uint64_t written = WriteFileContent(repo_, fd, node.content);
            std::lock_guard lock(mu_);
            result_.bytes += written;
          } catch (const Error& e) {
            Warn(snap_path, "restore " + snap_path + ": " + e.what());
          }
          close(fd);
          SetMetadata(path, node);
          if (opts_.verify) Verify(path, snap_path, node);
        }));
        return;
      }
      case NodeType::kSymlink:
        if (!included) return;
        unlink(path.c_str());
        if (symlink(n.linktarget.c_str(), path.c_str()) != 0) {
          Warn(snap_path, "symlink " + path + ": " + strerror(errno));
          return;
        }
        break;
      case NodeType::kFifo:
        if (!included) return;
        unlink(path.c_str());
        if (mkfifo(path.c_str(), 0600) != 0) {
          Warn(snap_path, "mkfifo " + path + ": " + strerror(errno));
          return;
        }
        break;
      case NodeType::kDev:
      case NodeType::kCharDev: {
        if (!included) return;
        unlink(path.c_str());
        mode_t kind = n.type == NodeType::kDev ? S_IFBLK : S_IFCHR;
        if (mknod(path.c_str(), kind | 0600, static_cast<dev_t>(n.device)) != 0) {
          Warn(snap_path, "mknod " + path + ": " + strerror(errno));
          return;
        }
        break;
      }
      case NodeType::kSocket:
      case NodeType::kIrregular:
        return;  // not restorable, as restic
    }
    result_.files++;
    SetMetadata(path, n);
  }

  void SetMetadata(const std::string& path, const Node& n) {
    bool is_link = n.type == NodeType::kSymlink;
    if (lchown(path.c_str(), n.uid, n.gid) != 0 && errno != EPERM)
      Warn(path, "lchown " + path + ": " + strerror(errno));
    if (!is_link) {
      for (const Xattr& x : n.xattrs) {
        const std::string& v = x.value ? *x.value : std::string();
        if (lsetxattr(path.c_str(), x.name.c_str(), v.data(), v.size(), 0) != 0 &&
            errno != ENOTSUP && errno != EPERM)
          Warn(path, "setxattr " + x.name + " on " + path + ": " + strerror(errno));
      }
      if (chmod(path.c_str(), PosixPermFromGoMode(n.mode)) != 0)
        Warn(path, "chmod " + path + ": " + strerror(errno));
    }
    struct timespec ts[2] = {ToTimespec(n.atime), ToTimespec(n.mtime)};
    if (utimensat(AT_FDCWD, path.c_str(), ts, AT_SYMLINK_NOFOLLOW) != 0)
      Warn(path, "utimes " + path + ": " + strerror(errno));
  }

  void Verify(const std::string& path, const std::string& snap_path, const Node& n) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      Warn(snap_path, "verify " + path + ": " + strerror(errno));
      return;
    }
    uint64_t off = 0;
    bool ok = true;
    for (const BlobId& id : n.content) {
      auto locs = repo_.index().Lookup(BlobType::kData, id);
      if (locs.empty()) {
        ok = false;
        break;
      }
      Bytes buf(locs[0].PlainLength());
      ssize_t r = pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
      if (r != static_cast<ssize_t>(buf.size()) || Sha256(buf) != static_cast<const RawId&>(id)) {
        ok = false;
        break;
      }
      off += buf.size();
    }
    struct stat st;
    if (ok && (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != off)) ok = false;
    close(fd);
    if (!ok) {
      Warn(snap_path, "verify " + snap_path + ": restored content differs from the snapshot");
    } else {
      std::lock_guard lock(mu_);
      result_.verified++;
    }
  }

  Repository& repo_;
  const RestoreOptions& opts_;
  ThreadPool pool_;
  std::vector<std::future<void>> jobs_;
  std::vector<std::pair<std::string, Node>> dirs_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> hardlinks_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> warnings_;
  RestoreResult result_;
};

}  // namespace

RestoreResult RunRestore(Repository& repo, const BlobId& tree, const RestoreOptions& opts) {
  Restore r(repo, opts);
  return r.Run(tree);
}

}  // namespace haven
