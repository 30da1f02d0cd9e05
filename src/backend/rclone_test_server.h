// Test-only: `rclone serve restic` on a loopback port, started and stopped by the project's
// tests/tools/rclone-rest-start (a missing rclone fails the test, never skips it), with its
// state in a fresh temporary folder.
#pragma once

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace haven::testing_rclone {

// tests/tools beside HAVEN_TEST_DATA (tests/data, which need not exist).
inline std::string ToolsDir() {
  std::string data = HAVEN_TEST_DATA;
  return data.substr(0, data.rfind('/')) + "/tools";
}

inline std::string MakeTempDir(const std::string& tag) {
  std::string tmpl = ::testing::TempDir() + "haven_" + tag + "_XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
}

// Runs cmd through the shell; its first line of output (empty on failure).
inline std::string FirstLineOf(const std::string& cmd, int* status = nullptr) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) out += buf;
  int rc = ::pclose(p);
  if (status) *status = rc;
  return out.substr(0, out.find('\n'));
}

class RcloneRestServer {
 public:
  // extra: options of rclone-rest-start (--append-only, --user U --pass-file F).
  explicit RcloneRestServer(const std::string& extra = "") : dir_(MakeTempDir("rclone_rest")) {
    int status = 0;
    url_ = FirstLineOf(ToolsDir() + "/rclone-rest-start " + dir_ + " " + extra, &status);
    EXPECT_EQ(status, 0) << "rclone-rest-start failed (is rclone installed? scripts/install-deps)";
    EXPECT_EQ(url_.rfind("http://127.0.0.1:", 0), 0u) << url_;
  }
  ~RcloneRestServer() {
    FirstLineOf(ToolsDir() + "/rclone-rest-start --stop " + dir_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& url() const { return url_; }  // http://127.0.0.1:PORT/
  const std::string& dir() const { return dir_; }  // the served files are dir()/data
  std::string WriteFile(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ + "/" + name) << text << "\n";
    return dir_ + "/" + name;
  }

 private:
  std::string dir_;
  std::string url_;
};

}  // namespace haven::testing_rclone
