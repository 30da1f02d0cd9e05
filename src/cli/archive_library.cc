#include "cli/archive_library.h"

#include <dlfcn.h>

#include <string>

#include "core/error.h"

namespace haven::cli {
namespace {

constexpr const char* kSoname = "libarchive.so.13";

template <typename F>
void Resolve(void* lib, F*& fn, const char* name) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr)
    Fail(ErrorCode::kFatal, std::string(kSoname) + " has no function " + name);
  fn = reinterpret_cast<F*>(sym);
}

ArchiveLibrary Load() {
  void* lib = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);  // never unloaded
  if (lib == nullptr) {
    const char* why = dlerror();
    Fail(ErrorCode::kFatal, std::string("cannot load ") + kSoname + " (the archive library of "
                            "dump --archive; Debian package libarchive13): " + (why ? why : "?"));
  }
  ArchiveLibrary a{};
  Resolve(lib, a.write_new, "archive_write_new");
  Resolve(lib, a.write_set_format_pax_restricted, "archive_write_set_format_pax_restricted");
  Resolve(lib, a.write_set_format_zip, "archive_write_set_format_zip");
  Resolve(lib, a.write_set_format_option, "archive_write_set_format_option");
  Resolve(lib, a.write_set_bytes_in_last_block, "archive_write_set_bytes_in_last_block");
  Resolve(lib, a.write_open_fd, "archive_write_open_fd");
  Resolve(lib, a.write_header, "archive_write_header");
  Resolve(lib, a.write_data, "archive_write_data");
  Resolve(lib, a.write_close, "archive_write_close");
  Resolve(lib, a.write_free, "archive_write_free");
  Resolve(lib, a.error_string, "archive_error_string");
  Resolve(lib, a.entry_new, "archive_entry_new");
  Resolve(lib, a.entry_free, "archive_entry_free");
  Resolve(lib, a.entry_set_filetype, "archive_entry_set_filetype");
  Resolve(lib, a.entry_copy_pathname, "archive_entry_copy_pathname");
  Resolve(lib, a.entry_copy_symlink, "archive_entry_copy_symlink");
  Resolve(lib, a.entry_set_size, "archive_entry_set_size");
  Resolve(lib, a.entry_set_perm, "archive_entry_set_perm");
  Resolve(lib, a.entry_set_uid, "archive_entry_set_uid");
  Resolve(lib, a.entry_set_gid, "archive_entry_set_gid");
  Resolve(lib, a.entry_copy_uname, "archive_entry_copy_uname");
  Resolve(lib, a.entry_copy_gname, "archive_entry_copy_gname");
  Resolve(lib, a.entry_set_mtime, "archive_entry_set_mtime");
  Resolve(lib, a.entry_xattr_add_entry, "archive_entry_xattr_add_entry");
  return a;
}

}  // namespace

const ArchiveLibrary& Archive() {
  static const ArchiveLibrary lib = Load();  // (an exception leaves it for the next call)
  return lib;
}

}  // namespace haven::cli
