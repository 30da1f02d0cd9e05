#include "cli/archive_writer.h"

#include <sys/stat.h>

#include "cli/archive_library.h"
#include "core/error.h"

namespace haven::cli {

namespace {

struct EntryDeleter {
  void operator()(archive_entry* e) const { Archive().entry_free(e); }
};

}  // namespace

ArchiveWriter::ArchiveWriter(ArchiveFormat format, int fd) : format_(format) {
  a_ = Archive().write_new();
  if (!a_) Fail(ErrorCode::kIo, "cannot create an archive writer (out of memory)");
  int r;
  if (format == ArchiveFormat::kTar) {
    // ustar, with a PAX header only for what ustar cannot hold (long names, xattrs, big ids),
    // as Go's archive/tar picks the format per header.
    r = Archive().write_set_format_pax_restricted(a_);
    // Extended attributes as SCHILY.xattr records only (what Go and GNU tar use).
    if (r == ARCHIVE_OK) r = Archive().write_set_format_option(a_, "pax", "xattrheader", "SCHILY");
  } else {
    r = Archive().write_set_format_zip(a_);
    if (r == ARCHIVE_OK) r = Archive().write_set_format_option(a_, "zip", "compression", "deflate");
  }
  // The last record is not padded to libarchive's 10240-byte block (Go's writer ends after
  // the two zero blocks of the trailer).
  if (r == ARCHIVE_OK) r = Archive().write_set_bytes_in_last_block(a_, 1);
  if (r == ARCHIVE_OK) r = Archive().write_open_fd(a_, fd);
  if (r != ARCHIVE_OK) Throw("cannot start the archive");
}

ArchiveWriter::~ArchiveWriter() {
  if (!finished_) Archive().write_close(a_);
  Archive().write_free(a_);
}

void ArchiveWriter::Throw(const std::string& what) const {
  const char* msg = Archive().error_string(a_);
  Fail(ErrorCode::kIo, what + (current_.empty() ? "" : " (entry \"" + current_ + "\")") + ": " +
                           (msg ? msg : "unknown libarchive error"));
}

void ArchiveWriter::Begin(const Node& n, const std::string& name) {
  current_ = name;
  std::unique_ptr<archive_entry, EntryDeleter> e(Archive().entry_new());
  if (!e) Throw("out of memory");
  // Permission bits plus setuid/setgid/sticky, as restic's dump sets them.
  mode_t perm = PosixPermFromGoMode(n.mode);
  if (n.type == NodeType::kDir) {
    Archive().entry_set_filetype(e.get(), AE_IFDIR);
    Archive().entry_copy_pathname(e.get(), (name + "/").c_str());
    Archive().entry_set_size(e.get(), 0);
  } else if (n.type == NodeType::kSymlink) {
    Archive().entry_set_filetype(e.get(), AE_IFLNK);
    Archive().entry_copy_pathname(e.get(), name.c_str());
    Archive().entry_copy_symlink(e.get(), n.linktarget.c_str());
    Archive().entry_set_size(e.get(), 0);
  } else {
    Archive().entry_set_filetype(e.get(), AE_IFREG);
    Archive().entry_copy_pathname(e.get(), name.c_str());
    Archive().entry_set_size(e.get(), n.type == NodeType::kFile ? int64_t(n.size) : 0);
  }
  Archive().entry_set_perm(e.get(), perm);
  Archive().entry_set_uid(e.get(), n.uid);
  Archive().entry_set_gid(e.get(), n.gid);
  if (!n.user.empty()) Archive().entry_copy_uname(e.get(), n.user.c_str());
  if (!n.group.empty()) Archive().entry_copy_gname(e.get(), n.group.c_str());
  // Go's tar writer rounds ModTime to the nearest second (no PAX mtime record).
  int64_t sec = n.mtime.sec + (n.mtime.nsec >= 500000000 ? 1 : 0);
  Archive().entry_set_mtime(e.get(), static_cast<time_t>(sec), 0);
  if (format_ == ArchiveFormat::kTar)
    for (const Xattr& x : n.xattrs) {
      const std::string v = x.value.value_or("");
      Archive().entry_xattr_add_entry(e.get(), x.name.c_str(), v.data(), v.size());
    }
  int r = Archive().write_header(a_, e.get());
  if (r < ARCHIVE_WARN) Throw("cannot write the header");
}

void ArchiveWriter::Write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    la_ssize_t w = Archive().write_data(a_, p, size);
    if (w < 0) Throw("cannot write the content");
    if (w == 0) Throw("the archive took no content");
    p += w;
    size -= static_cast<size_t>(w);
  }
}

void ArchiveWriter::Finish() {
  current_.clear();
  finished_ = true;
  if (Archive().write_close(a_) != ARCHIVE_OK) Throw("cannot finish the archive");
}

}  // namespace haven::cli
