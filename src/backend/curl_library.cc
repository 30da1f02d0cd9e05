#include "backend/curl_library.h"

#include <dlfcn.h>

#include <atomic>
#include <string>

#include "core/error.h"

namespace haven {
namespace {

constexpr const char* kSoname = "libcurl.so.4";
std::atomic<bool> loaded{false};

template <typename F>
void Resolve(void* lib, F*& fn, const char* name) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr)
    Fail(ErrorCode::kFatal, std::string(kSoname) + " has no function " + name +
                                " (libcurl older than 7.68?)");
  fn = reinterpret_cast<F*>(sym);
}

CurlLibrary Load() {
  // Never unloaded: libcurl keeps global state (curl_global_init) for the process.
  void* lib = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    Fail(ErrorCode::kFatal, std::string("cannot load ") + kSoname + " (the HTTP library of the "
                            "remote backends; Debian package libcurl4): " + (why ? why : "?"));
  }
  CurlLibrary c{};
  Resolve(lib, c.global_init, "curl_global_init");
  Resolve(lib, c.easy_init, "curl_easy_init");
  Resolve(lib, c.easy_cleanup, "curl_easy_cleanup");
  Resolve(lib, c.easy_reset, "curl_easy_reset");
  Resolve(lib, c.easy_setopt, "curl_easy_setopt");
  Resolve(lib, c.easy_getinfo, "curl_easy_getinfo");
  Resolve(lib, c.easy_perform, "curl_easy_perform");
  Resolve(lib, c.easy_strerror, "curl_easy_strerror");
  Resolve(lib, c.slist_append, "curl_slist_append");
  Resolve(lib, c.slist_free_all, "curl_slist_free_all");
  Resolve(lib, c.multi_init, "curl_multi_init");
  Resolve(lib, c.multi_cleanup, "curl_multi_cleanup");
  Resolve(lib, c.multi_setopt, "curl_multi_setopt");
  Resolve(lib, c.multi_add_handle, "curl_multi_add_handle");
  Resolve(lib, c.multi_remove_handle, "curl_multi_remove_handle");
  Resolve(lib, c.multi_perform, "curl_multi_perform");
  Resolve(lib, c.multi_poll, "curl_multi_poll");
  Resolve(lib, c.multi_wakeup, "curl_multi_wakeup");
  Resolve(lib, c.multi_info_read, "curl_multi_info_read");
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
