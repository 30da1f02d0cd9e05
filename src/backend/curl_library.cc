#include "backend/curl_library.h"

#include <atomic>

#include "core/shared_library.h"

namespace haven {
namespace {

std::atomic<bool> loaded{false};

CurlLibrary Load() {
  // Never unloaded: libcurl keeps global state (curl_global_init) for the process.
  const SharedLibrary lib("libcurl.so.4",
                          "the HTTP library of the remote backends; Debian package libcurl4");
  CurlLibrary c{};
  lib.Resolve(c.global_init, "curl_global_init");
  lib.Resolve(c.easy_init, "curl_easy_init");
  lib.Resolve(c.easy_cleanup, "curl_easy_cleanup");
  lib.Resolve(c.easy_reset, "curl_easy_reset");
  lib.Resolve(c.easy_setopt, "curl_easy_setopt");
  lib.Resolve(c.easy_getinfo, "curl_easy_getinfo");
  lib.Resolve(c.easy_perform, "curl_easy_perform");
  lib.Resolve(c.easy_strerror, "curl_easy_strerror");
  lib.Resolve(c.slist_append, "curl_slist_append");
  lib.Resolve(c.slist_free_all, "curl_slist_free_all");
  lib.Resolve(c.multi_init, "curl_multi_init");
  lib.Resolve(c.multi_cleanup, "curl_multi_cleanup");
  lib.Resolve(c.multi_setopt, "curl_multi_setopt");
  lib.Resolve(c.multi_add_handle, "curl_multi_add_handle");
  lib.Resolve(c.multi_remove_handle, "curl_multi_remove_handle");
  lib.Resolve(c.multi_perform, "curl_multi_perform");
  lib.Resolve(c.multi_poll, "curl_multi_poll");
  lib.Resolve(c.multi_wakeup, "curl_multi_wakeup");
  lib.Resolve(c.multi_info_read, "curl_multi_info_read");
  loaded = true;
  return c;
}

}  // namespace

const CurlLibrary& Curl() {
  static const CurlLibrary lib = Load();  // (an exception leaves it for the next call)
  return lib;
}

bool CurlLoaded() { return loaded; }

}  // namespace haven
