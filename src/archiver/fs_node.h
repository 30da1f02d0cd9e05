// Turning a file-system entry into a tree node with restic's metadata rules (restic 0.14
// NodeFromFileInfo): masked Go mode, times in local time with atime = mtime, uid/gid and
// their names, inode and device id, links for files/symlinks/devices, symlink target,
// every extended attribute (none for symlinks).
#pragma once

#include <sys/stat.h>

#include <string>

#include "repo/node.h"

namespace haven {

// Fills a node (without content/subtree) for `path` whose lstat result is `st`.
// Non-fatal problems (an unreadable xattr) are appended to *warnings.
// `same_object`: the parent snapshot's node of this entry when SameObjectVersion holds
// for it; its extended attributes are taken instead of being listed and read again
// (no llistxattr/lgetxattr), every other field still comes from `st`.
Node NodeFromStat(const std::string& path, const std::string& name, const struct stat& st,
                  std::vector<std::string>* warnings, bool with_atime = false,
                  const Node* same_object = nullptr);

gojson::Timestamp StatTime(const struct timespec& ts);

// The change test of backup and capture: `old_node` is a file node whose mtime, ctime,
// size and inode equal the lstat result `st` (a regular file), so its content can be
// reused without reading (given that its blobs are still in the repository). Without
// check_ctime / check_inode that field is not compared (restic's --ignore-ctime,
// --ignore-inode).
bool SameFileVersion(const Node& old_node, const struct stat& st, bool check_ctime = true,
                     bool check_inode = true);

// `old_node` describes the same file-system object as `st` in the same state for
// everything that changes the inode's ctime: same type, inode, device, mtime and ctime
// (and size for a regular file). Setting or removing an extended attribute updates the
// ctime (as chmod, chown and link count changes do), so the old node's xattrs are still
// the object's xattrs. Never true for symlinks (they have no xattrs in a node) or for
// nodes with zeroed inode/device (intermediate directories of a capture).
bool SameObjectVersion(const Node& old_node, const struct stat& st);

}  // namespace haven
