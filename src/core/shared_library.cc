#include "core/shared_library.h"

#include <dlfcn.h>

#include <utility>

#include "core/error.h"

namespace haven {

SharedLibrary::SharedLibrary(std::string soname, const std::string& what)
    : soname_(std::move(soname)), handle_(dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL)) {
  if (handle_ == nullptr) {
    const char* why = dlerror();
    Fail(ErrorCode::kFatal,
         "cannot load " + soname_ + " (" + what + "): " + (why ? why : "unknown error"));
  }
}

void* SharedLibrary::Symbol(const char* name) const {
  void* sym = dlsym(handle_, name);
  if (sym == nullptr) Fail(ErrorCode::kFatal, soname_ + " has no function " + name);
  return sym;
}

}  // namespace haven
