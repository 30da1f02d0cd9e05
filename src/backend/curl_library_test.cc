// CurlLibrary: every function haven calls resolves from the loaded libcurl.so.4 and works
// through its pointer (the variadic ones too); the library is reported loaded afterwards.
// (That a local command never loads it: tests/integration/startup_libraries.sh.)
#include "backend/curl_library.h"

#include <gtest/gtest.h>

#include <string>

namespace haven {
namespace {

TEST(CurlLibrary, EveryFunctionResolvesAndWorksThroughItsPointer) {
  const CurlLibrary& c = Curl();
  EXPECT_TRUE(CurlLoaded());
  EXPECT_EQ(&Curl(), &c);  // loaded once
  ASSERT_EQ(c.global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
  CURL* h = c.easy_init();
  ASSERT_NE(h, nullptr);
  // Variadic setters and getters: a long, a string and a pointer out.
  EXPECT_EQ(c.easy_setopt(h, CURLOPT_TIMEOUT_MS, 1000L), CURLE_OK);
  EXPECT_EQ(c.easy_setopt(h, CURLOPT_URL, "http://127.0.0.1:1/x"), CURLE_OK);
  char* url = nullptr;
  EXPECT_EQ(c.easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &url), CURLE_OK);
  ASSERT_NE(url, nullptr);
  EXPECT_EQ(std::string(url), "http://127.0.0.1:1/x");
  EXPECT_EQ(c.easy_perform(h), CURLE_COULDNT_CONNECT);  // port 1: refused at once
  EXPECT_NE(std::string(c.easy_strerror(CURLE_COULDNT_CONNECT)), "");
  c.easy_reset(h);
  curl_slist* l = c.slist_append(nullptr, "A: b");
  ASSERT_NE(l, nullptr);
  c.slist_free_all(l);
  c.easy_cleanup(h);
  CURLM* m = c.multi_init();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(c.multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, 1L), CURLM_OK);
  EXPECT_EQ(c.multi_wakeup(m), CURLM_OK);
  EXPECT_EQ(c.multi_cleanup(m), CURLM_OK);
  for (void* f : {reinterpret_cast<void*>(c.multi_add_handle),
                  reinterpret_cast<void*>(c.multi_remove_handle),
                  reinterpret_cast<void*>(c.multi_perform), reinterpret_cast<void*>(c.multi_poll),
                  reinterpret_cast<void*>(c.multi_info_read)})
    EXPECT_NE(f, nullptr);
}

}  // namespace
}  // namespace haven
