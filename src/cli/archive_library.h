// libarchive, loaded when `dump --archive` first writes an archive instead of at process
// start. Linked the usual way, libarchive and what it pulls in (libxml2, ICU, liblzma,
// lz4, bzip2, nettle, acl) are mapped and relocated by every haven process for the one
// command that uses it (measured with backend/curl_library.h's change: docs/backends.md
// "libcurl"). ArchiveWriter (archive_writer.cc) calls it through Archive() only; the
// first call dlopen()s libarchive.so.13, the library Debian's libarchive-dev builds against.
#pragma once

#include <archive.h>
#include <archive_entry.h>

namespace haven::cli {

// The libarchive functions haven calls, resolved from the loaded library.
struct ArchiveLibrary {
  archive* (*write_new)();
  int (*write_set_format_pax_restricted)(archive*);
  int (*write_set_format_zip)(archive*);
  int (*write_set_format_option)(archive*, const char*, const char*, const char*);
  int (*write_set_bytes_in_last_block)(archive*, int);
  int (*write_open_fd)(archive*, int);
  int (*write_header)(archive*, archive_entry*);
  la_ssize_t (*write_data)(archive*, const void*, size_t);
  int (*write_close)(archive*);
  int (*write_free)(archive*);
  const char* (*error_string)(archive*);
  archive_entry* (*entry_new)();
  void (*entry_free)(archive_entry*);
  void (*entry_set_filetype)(archive_entry*, unsigned int);
  void (*entry_copy_pathname)(archive_entry*, const char*);
  void (*entry_copy_symlink)(archive_entry*, const char*);
  void (*entry_set_size)(archive_entry*, la_int64_t);
  void (*entry_set_perm)(archive_entry*, __LA_MODE_T);
  void (*entry_set_uid)(archive_entry*, la_int64_t);
  void (*entry_set_gid)(archive_entry*, la_int64_t);
  void (*entry_copy_uname)(archive_entry*, const char*);
  void (*entry_copy_gname)(archive_entry*, const char*);
  void (*entry_set_mtime)(archive_entry*, time_t, long);
  void (*entry_xattr_add_entry)(archive_entry*, const char*, const void*, size_t);
};

// The library, loaded on the first call (thread-safe). Throws Error(kFatal) naming
// libarchive.so.13 and the loader's message when it cannot be loaded or lacks a function.
const ArchiveLibrary& Archive();

}  // namespace haven::cli
