// A shared library loaded at run time (dlopen) and never unloaded: what only some commands
// need (libcurl for the remote backends, libarchive for dump's archives) is not mapped and
// relocated by every process at start (docs/backends.md "libcurl (and libarchive), loaded
// at first use").
#pragma once

#include <string>

namespace haven {

class SharedLibrary {
 public:
  // Loads `soname` (RTLD_NOW | RTLD_LOCAL). Throws Error(kFatal) "cannot load SONAME
  // (WHAT): <the loader's message>"; `what` says what it is for and its Debian package.
  SharedLibrary(std::string soname, const std::string& what);

  // Sets fn to the library's function `name`; throws Error(kFatal) "SONAME has no
  // function NAME" when it lacks it.
  template <typename F>
  void Resolve(F*& fn, const char* name) const {
    fn = reinterpret_cast<F*>(Symbol(name));
  }

 private:
  void* Symbol(const char* name) const;

  std::string soname_;
  void* handle_ = nullptr;
};

}  // namespace haven
