// dpkg's records of package files: the parsers, the lookup under a fake root, and scan's
// use of them (package-owned unmodified files are left out; a modified copy or the same
// relative path elsewhere is still reported).
#include "capture/dpkg_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "capture/scan_paths.h"

namespace haven::capture {
namespace {

std::string Hex(const Md5& m) {
  static const char* k = "0123456789abcdef";
  std::string s;
  for (uint8_t b : m) s.push_back(k[b >> 4]), s.push_back(k[b & 15]);
  return s;
}

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// An AWS key pair built at run time (never a literal credential).
std::string AwsLines(uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string up = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const std::string b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string id = "AKIA", secret;
  for (int i = 0; i < 16; ++i) id.push_back(up[rng() % up.size()]);
  for (int i = 0; i < 40; ++i) secret.push_back(b64[rng() % b64.size()]);
  return "aws_access_key_id = " + id + "\naws_secret_access_key = " + secret + "\n";
}

TEST(DpkgFilesTest, ParsesMd5sums) {
  const std::string a(32, 'a');
  auto recs = ParseMd5sums(a + "  usr/share/doc/x/README\n" +            // normal
                           "0123456789abcdef0123456789ABCDEF  usr/a b\r\n" +  // blank, CRLF
                           a + " *etc/bin\n" +                            // binary marker
                           "zz" + a.substr(2) + "  usr/bad-hex\n" +        // skipped
                           a + " usr/one-blank\n" +                         // skipped
                           a + "  \n" + "short\n");                         // skipped
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].path, "usr/share/doc/x/README");
  EXPECT_EQ(Hex(recs[0].md5), a);
  EXPECT_EQ(recs[1].path, "usr/a b");
  EXPECT_EQ(Hex(recs[1].md5), "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(recs[2].path, "etc/bin");
}

TEST(DpkgFilesTest, ParsesStatusConffiles) {
  const std::string a(32, 'b'), c(32, 'c');
  auto recs = ParseStatusConffiles("Package: x\nConffiles:\n /etc/x.conf " + a + "\n /etc/old " +
                                   c + " obsolete\n /etc/with space " + a +
                                   "\nDescription: d\n /etc/not-a-conffile " + a + "\n");
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].path, "etc/x.conf");
  EXPECT_EQ(recs[1].path, "etc/old");
  EXPECT_EQ(Hex(recs[1].md5), c);
  EXPECT_EQ(recs[2].path, "etc/with space");
}

TEST(DpkgFilesTest, Md5KnownVector) {
  EXPECT_EQ(Hex(Md5Of("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Hex(Md5Of("abc")), "900150983cd24fb0d6963f7d28e17f72");
}

class FakeRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/haven-dpkg-XXXXXX";
    root_ = mkdtemp(tmpl);
    doc_ = AwsLines(7);
    conf_ = "# sample\n" + AwsLines(8);
    Write(root_ + "/usr/share/doc/pkg/README", doc_);
    Write(root_ + "/etc/pkg.conf", conf_);
    Write(root_ + "/var/lib/dpkg/info/pkg.md5sums",
          Hex(Md5Of(doc_)) + "  usr/share/doc/pkg/README\n");
    Write(root_ + "/var/lib/dpkg/info/pkg.list", "/usr/share/doc/pkg/README\n");
    Write(root_ + "/var/lib/dpkg/status",
          "Package: pkg\nConffiles:\n /etc/pkg.conf " + Hex(Md5Of(conf_)) + "\n");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_, doc_, conf_;
};

TEST_F(FakeRoot, LooksUpLazilyByPathAndContent) {
  DpkgFiles d(root_);
  EXPECT_EQ(d.size(), 0u);  // nothing read before a lookup
  EXPECT_FALSE(d.IsUnmodified("/home/me/usr/share/doc/pkg/README", Md5Of(doc_)));
  EXPECT_TRUE(d.IsUnmodified(root_ + "/usr/share/doc/pkg/README", Md5Of(doc_)));
  EXPECT_EQ(d.size(), 2u);
  EXPECT_TRUE(d.IsUnmodified(root_ + "//usr/./share/doc/pkg/README", Md5Of(doc_)));
  EXPECT_FALSE(d.IsUnmodified(root_ + "/usr/share/doc/pkg/README", Md5Of(doc_ + "x")));
  EXPECT_FALSE(d.IsUnmodified(root_ + "/usr/share/doc/other/README", Md5Of(doc_)));
  EXPECT_FALSE(d.IsUnmodified(root_ + "/usr/share/doc/pkg/../pkg/README", Md5Of(doc_)));
  EXPECT_TRUE(d.IsUnmodified(root_ + "/etc/pkg.conf", Md5Of(conf_)));
  EXPECT_TRUE(d.IsPackaged(root_ + "/etc/pkg.conf"));
  EXPECT_FALSE(d.IsPackaged(root_ + "/etc/other.conf"));
}

TEST_F(FakeRoot, ScanLeavesOutUnmodifiedPackageFiles) {
  // A user's tree holding the same relative path and content, and a modified conffile.
  Write(root_ + "/home/me/usr/share/doc/pkg/README", doc_);
  Scanner scanner;
  DpkgFiles d(root_);
  ScanPathsOptions opts;
  opts.jobs = 2;
  opts.packages = &d;
  ScanReport rep = ScanPaths(scanner, {root_}, opts);
  std::set<std::string> paths;
  for (const auto& f : rep.findings) paths.insert(f.path);
  EXPECT_EQ(paths, std::set<std::string>{root_ + "/home/me/usr/share/doc/pkg/README"});
  EXPECT_EQ(rep.package_files_ignored, 2u);
  EXPECT_EQ(rep.package_findings_ignored, 4u);

  Write(root_ + "/etc/pkg.conf", conf_ + "# edited\n");
  rep = ScanPaths(scanner, {root_}, opts);
  paths.clear();
  for (const auto& f : rep.findings) paths.insert(f.path);
  EXPECT_EQ(paths, (std::set<std::string>{root_ + "/etc/pkg.conf",
                                          root_ + "/home/me/usr/share/doc/pkg/README"}));
  EXPECT_EQ(rep.package_files_ignored, 1u);

  opts.packages = nullptr;  // --include-package-files
  rep = ScanPaths(scanner, {root_}, opts);
  EXPECT_EQ(rep.package_files_ignored, 0u);
  EXPECT_EQ(rep.findings.size(), 6u);
}

}  // namespace
}  // namespace haven::capture
