#include "cli/archive_library.h"

#include "core/shared_library.h"

namespace haven::cli {
namespace {

ArchiveLibrary Load() {
  const SharedLibrary lib("libarchive.so.13",
                          "the archive library of dump --archive; Debian package libarchive13");
  ArchiveLibrary a{};
  lib.Resolve(a.write_new, "archive_write_new");
  lib.Resolve(a.write_set_format_pax_restricted, "archive_write_set_format_pax_restricted");
  lib.Resolve(a.write_set_format_zip, "archive_write_set_format_zip");
  lib.Resolve(a.write_set_format_option, "archive_write_set_format_option");
  lib.Resolve(a.write_set_bytes_in_last_block, "archive_write_set_bytes_in_last_block");
  lib.Resolve(a.write_open_fd, "archive_write_open_fd");
  lib.Resolve(a.write_header, "archive_write_header");
  lib.Resolve(a.write_data, "archive_write_data");
  lib.Resolve(a.write_close, "archive_write_close");
  lib.Resolve(a.write_free, "archive_write_free");
  lib.Resolve(a.error_string, "archive_error_string");
  lib.Resolve(a.entry_new, "archive_entry_new");
  lib.Resolve(a.entry_free, "archive_entry_free");
  lib.Resolve(a.entry_set_filetype, "archive_entry_set_filetype");
  lib.Resolve(a.entry_copy_pathname, "archive_entry_copy_pathname");
  lib.Resolve(a.entry_copy_symlink, "archive_entry_copy_symlink");
  lib.Resolve(a.entry_set_size, "archive_entry_set_size");
  lib.Resolve(a.entry_set_perm, "archive_entry_set_perm");
  lib.Resolve(a.entry_set_uid, "archive_entry_set_uid");
  lib.Resolve(a.entry_set_gid, "archive_entry_set_gid");
  lib.Resolve(a.entry_copy_uname, "archive_entry_copy_uname");
  lib.Resolve(a.entry_copy_gname, "archive_entry_copy_gname");
  lib.Resolve(a.entry_set_mtime, "archive_entry_set_mtime");
  lib.Resolve(a.entry_xattr_add_entry, "archive_entry_xattr_add_entry");
  return a;
}

}  // namespace

const ArchiveLibrary& Archive() {
  static const ArchiveLibrary lib = Load();  // (an exception leaves it for the next call)
  return lib;
}

}  // namespace haven::cli
