// libcurl, loaded at the first HTTP request instead of at process start. Linked the usual
// way, libcurl and the 31 libraries it pulls in (TLS, Kerberos, LDAP, IDN, ...) are mapped
// and relocated by every haven process: about 12 ms of the 30 ms `haven version` took on
// the 2-core test machine, paid by every command on a local repository or a box, which
// never sends a request. The remote backends reach libcurl through Curl() only
// (http_client.cc); the first call dlopen()s libcurl.so.4, the library Debian's
// libcurl4-openssl-dev builds against (docs/backends.md "libcurl").
#pragma once

#include <curl/curl.h>

namespace haven {

// The libcurl functions haven calls, resolved from the loaded library. The variadic ones
// are called through pointers of their own variadic type: each argument is passed with its
// real type, exactly as a direct call passes it.
struct CurlLibrary {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  void (*easy_reset)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  CURLcode (*easy_perform)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
  CURLM* (*multi_init)();
  CURLMcode (*multi_cleanup)(CURLM*);
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...);
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_perform)(CURLM*, int*);
  CURLMcode (*multi_poll)(CURLM*, curl_waitfd*, unsigned int, int, int*);
  CURLMcode (*multi_wakeup)(CURLM*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
};

// The library, loaded on the first call (thread-safe). Throws Error(kFatal) naming
// libcurl.so.4 and the loader's message when it cannot be loaded or lacks a function; a
// later call tries again.
const CurlLibrary& Curl();

// True once Curl() has loaded the library in this process (tests).
bool CurlLoaded();

}  // namespace haven
