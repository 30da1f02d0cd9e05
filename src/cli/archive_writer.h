// A tar or zip stream of snapshot nodes, as restic 0.14's dump writes them (internal/dump):
// tar: one entry per directory ("name/"), regular file and symlink, with the permission bits
// plus setuid/setgid/sticky, uid/gid and user/group names, the mtime rounded to the second
// (Go's archive/tar drops atime and ctime unless asked for PAX), and extended attributes as
// PAX records (SCHILY.xattr.NAME). Names are written as their raw bytes (libarchive marks a
// PAX path it cannot convert with hdrcharset=BINARY). zip: files deflated, directories
// stored, symlinks with their target as content, Unix mode and mtime recorded.
// Built on libarchive; errors throw kIo naming the entry.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "repo/node.h"

struct archive;

namespace haven::cli {

enum class ArchiveFormat { kTar, kZip };

class ArchiveWriter {
 public:
  // Writes to the file descriptor `fd` (not closed).
  ArchiveWriter(ArchiveFormat format, int fd);
  ~ArchiveWriter();
  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;

  // Starts the entry for `node` at the relative path `name` (no leading '/'). A file's
  // content follows through Write (exactly node.size bytes); directories and symlinks
  // have none.
  void Begin(const Node& node, const std::string& name);
  void Write(const void* data, size_t size);
  // Ends the archive (writes the trailer); the destructor does it too, ignoring errors.
  void Finish();

 private:
  [[noreturn]] void Throw(const std::string& what) const;

  ArchiveFormat format_;
  archive* a_ = nullptr;
  std::string current_;
  bool finished_ = false;
};

}  // namespace haven::cli
