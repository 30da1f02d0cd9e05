// SharedLibrary: a library and its functions resolved at run time; a missing library or
// function is an Error that names it (and what the library is for).
#include "core/shared_library.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/error.h"

namespace haven {
namespace {

TEST(SharedLibrary, ResolvesAFunctionThatWorks) {
  const SharedLibrary libc("libc.so.6", "the C library");
  size_t (*len)(const char*) = nullptr;
  libc.Resolve(len, "strlen");
  ASSERT_NE(len, nullptr);
  EXPECT_EQ(len("haven"), 5u);
}

TEST(SharedLibrary, AMissingLibraryOrFunctionIsAnErrorNamingIt) {
  try {
    SharedLibrary("libhaven-no-such.so.0", "for this test; Debian package none");
    ADD_FAILURE() << "a missing library loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFatal);
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot load libhaven-no-such.so.0 (for this test; Debian package none)"),
              std::string::npos) << m;
  }
  const SharedLibrary libc("libc.so.6", "the C library");
  void (*fn)() = nullptr;
  try {
    libc.Resolve(fn, "haven_no_such_function");
    ADD_FAILURE() << "a missing function resolved";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFatal);
    EXPECT_NE(std::string(e.what()).find("libc.so.6 has no function haven_no_such_function"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(fn, nullptr);
}

}  // namespace
}  // namespace haven
