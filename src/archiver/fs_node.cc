#include "archiver/fs_node.h"

#include <errno.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "repo/host_info.h"

namespace haven {

gojson::Timestamp StatTime(const struct timespec& ts) {
  return gojson::LocalTime(ts.tv_sec, static_cast<int32_t>(ts.tv_nsec));
}

namespace {

void ReadXattrs(const std::string& path, Node& n, std::vector<std::string>* warnings) {
  std::string names(1024, '\0');
  ssize_t len;
  for (;;) {
    len = llistxattr(path.c_str(), names.data(), names.size());
    if (len >= 0) break;
    if (errno == ERANGE) {
      names.resize(names.size() * 4);
      continue;
    }
    if (errno != ENOTSUP && errno != ENODATA)
      warnings->push_back("listxattr " + path + ": " + strerror(errno));
    return;
  }
  names.resize(static_cast<size_t>(len));
  size_t pos = 0;
  while (pos < names.size()) {
    size_t end = names.find('\0', pos);
    if (end == std::string::npos) end = names.size();
    std::string name = names.substr(pos, end - pos);
    pos = end + 1;
    if (name.empty()) continue;
    std::string value(256, '\0');
    ssize_t vl;
    for (;;) {
      vl = lgetxattr(path.c_str(), name.c_str(), value.data(), value.size());
      if (vl >= 0) break;
      if (errno == ERANGE) {
        value.resize(value.size() * 4);
        continue;
      }
      break;
    }
    if (vl < 0) {
      warnings->push_back("can not obtain extended attribute " + name + " for " + path + ": " +
                          strerror(errno));
      continue;
    }
    value.resize(static_cast<size_t>(vl));
    n.xattrs.push_back({name, std::move(value)});
  }
}

}  // namespace

Node NodeFromStat(const std::string& path, const std::string& name, const struct stat& st,
                  std::vector<std::string>* warnings, bool with_atime, const Node* same_object) {
  Node n;
  n.name = name;
  n.mode = GoModeFromPosix(st.st_mode);
  switch (st.st_mode & S_IFMT) {
    case S_IFREG: n.type = NodeType::kFile; break;
    case S_IFDIR: n.type = NodeType::kDir; break;
    case S_IFLNK: n.type = NodeType::kSymlink; break;
    case S_IFBLK: n.type = NodeType::kDev; break;
    case S_IFCHR: n.type = NodeType::kCharDev; break;
    case S_IFIFO: n.type = NodeType::kFifo; break;
    case S_IFSOCK: n.type = NodeType::kSocket; break;
    default: n.type = NodeType::kIrregular; break;
  }
  n.mtime = StatTime(st.st_mtim);
  n.atime = with_atime ? StatTime(st.st_atim) : n.mtime;
  // The zone offset follows from the second: no second localtime_r when both share it.
  n.ctime = st.st_ctim.tv_sec == st.st_mtim.tv_sec
                ? gojson::Timestamp{n.mtime.sec, static_cast<int32_t>(st.st_ctim.tv_nsec),
                                    n.mtime.offset}
                : StatTime(st.st_ctim);
  n.uid = st.st_uid;
  n.gid = st.st_gid;
  n.user = UserNameOf(st.st_uid);
  n.group = GroupNameOf(st.st_gid);
  n.inode = st.st_ino;
  n.device_id = st.st_dev;
  switch (n.type) {
    case NodeType::kFile:
      n.size = static_cast<uint64_t>(st.st_size);
      n.links = st.st_nlink;
      break;
    case NodeType::kSymlink: {
      n.links = st.st_nlink;
      std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 256) + 1, '\0');
      for (;;) {
        ssize_t r = readlink(path.c_str(), target.data(), target.size());
        if (r < 0) {
          warnings->push_back("readlink " + path + ": " + strerror(errno));
          target.clear();
          break;
        }
        if (static_cast<size_t>(r) < target.size()) {
          target.resize(static_cast<size_t>(r));
          break;
        }
        target.resize(target.size() * 2);
      }
      n.linktarget = std::move(target);
      break;
    }
    case NodeType::kDev:
    case NodeType::kCharDev:
      n.device = st.st_rdev;
      n.links = st.st_nlink;
      break;
    default: break;
  }
  if (n.type != NodeType::kSymlink) {
    if (same_object && SameObjectVersion(*same_object, st)) {
      n.xattrs = same_object->xattrs;
    } else {
      ReadXattrs(path, n, warnings);
    }
  }
  return n;
}

namespace {

bool SameTime(const gojson::Timestamp& t, const struct timespec& ts) {
  // The zone offset is not compared: it follows from the seconds in one process.
  return t.sec == static_cast<int64_t>(ts.tv_sec) && t.nsec == static_cast<int32_t>(ts.tv_nsec);
}

}  // namespace

bool SameFileVersion(const Node& old_node, const struct stat& st, bool check_ctime,
                     bool check_inode) {
  if (old_node.type != NodeType::kFile || !S_ISREG(st.st_mode)) return false;
  return SameTime(old_node.mtime, st.st_mtim) &&
         (!check_ctime || SameTime(old_node.ctime, st.st_ctim)) &&
         old_node.size == static_cast<uint64_t>(st.st_size) &&
         (!check_inode || old_node.inode == static_cast<uint64_t>(st.st_ino));
}

bool SameObjectVersion(const Node& old_node, const struct stat& st) {
  NodeType t;
  if (S_ISREG(st.st_mode)) {
    t = NodeType::kFile;
    if (old_node.size != static_cast<uint64_t>(st.st_size)) return false;
  } else if (S_ISDIR(st.st_mode)) {
    t = NodeType::kDir;
  } else if (S_ISBLK(st.st_mode)) {
    t = NodeType::kDev;
  } else if (S_ISCHR(st.st_mode)) {
    t = NodeType::kCharDev;
  } else if (S_ISFIFO(st.st_mode)) {
    t = NodeType::kFifo;
  } else if (S_ISSOCK(st.st_mode)) {
    t = NodeType::kSocket;
  } else {
    return false;  // symlinks (no xattrs) and anything irregular
  }
  return old_node.type == t && old_node.inode != 0 &&
         old_node.inode == static_cast<uint64_t>(st.st_ino) &&
         old_node.device_id == static_cast<uint64_t>(st.st_dev) &&
         SameTime(old_node.mtime, st.st_mtim) && SameTime(old_node.ctime, st.st_ctim);
}

}  // namespace haven
