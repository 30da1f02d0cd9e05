#include "restorer/restorer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "archiver/archiver.h"
#include "backend/mem_backend.h"
#include "crypto/kdf.h"

namespace haven {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPassword = "restore-test";

std::string Random(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

void WriteFile(const fs::path& p, const std::string& data) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << data;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A tree whose files share blobs across files and packs: restore must read each pack
// once and write every use of a blob.
class RestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("haven-restore-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    src_ = root_ / "src";
    std::string big = Random(1, 5 << 20);  // several chunks
    files_["big.bin"] = big;
    files_["big-copy.bin"] = big;                       // every blob used twice
    files_["twice.bin"] = big.substr(0, 3 << 20) + big;  // chunks repeat inside one file
    files_["sparse.bin"] = std::string(3 << 20, '\0') + Random(2, 100000) +
                           std::string(2 << 20, '\0');
    files_["empty"] = "";
    for (int i = 0; i < 300; i++)
      files_["many/f" + std::to_string(i)] = "small file " + std::to_string(i % 50) + "\n";
    for (const auto& [name, data] : files_) WriteFile(src_ / name, data);
    // Hard links restore as links to one inode.
    ASSERT_EQ(link((src_ / "big.bin").c_str(), (src_ / "big-link.bin").c_str()), 0);
    files_["big-link.bin"] = big;

    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    auto repo = Repository::Open(mem_, kPassword, 2);
    repo->LoadIndex();
    BackupOptions opts;
    opts.targets = {src_.string()};
    opts.jobs = 2;
    tree_ = RunBackup(*repo, opts, false).tree;
  }
  void TearDown() override { fs::remove_all(root_); }

  // The subtree that holds the backed-up folder's entries.
  BlobId SourceTree(Repository& repo) {
    BlobId t = tree_;
    for (const auto& part : src_) {
      if (part == "/") continue;
      for (const Node& n : repo.LoadTree(t))
        if (n.name == part.string()) t = *n.subtree;
    }
    return t;
  }

  RestoreResult Restore(int jobs, const fs::path& target, std::vector<std::string>* warnings) {
    auto repo = Repository::Open(mem_, kPassword, jobs);
    repo->LoadIndex();
    RestoreOptions opts;
    opts.target = target.string();
    opts.jobs = jobs;
    opts.verify = true;
    opts.warn = [&](const std::string& w) { warnings->push_back(w); };
    return RunRestore(*repo, SourceTree(*repo), opts);
  }

  fs::path root_, src_;
  std::map<std::string, std::string> files_;
  std::shared_ptr<MemBackend> mem_;
  BlobId tree_;
};

TEST_F(RestoreTest, EveryFileIdenticalWithAnyThreadCount) {
  for (int jobs : {1, 3}) {
    fs::path out = root_ / ("out" + std::to_string(jobs));
    std::vector<std::string> warnings;
    RestoreResult r = Restore(jobs, out, &warnings);
    EXPECT_TRUE(warnings.empty()) << warnings[0];
    EXPECT_EQ(r.errors, 0u);
    EXPECT_EQ(r.verified, files_.size() - 1);  // the hard link is not a file of its own
    for (const auto& [name, data] : files_) {
      ASSERT_TRUE(fs::exists(out / name)) << name;
      EXPECT_EQ(ReadFile(out / name), data) << name << " with " << jobs << " jobs";
    }
    struct stat a, b;
    ASSERT_EQ(stat((out / "big.bin").c_str(), &a), 0);
    ASSERT_EQ(stat((out / "big-link.bin").c_str(), &b), 0);
    EXPECT_EQ(a.st_ino, b.st_ino);
    struct stat sp;
    ASSERT_EQ(stat((out / "sparse.bin").c_str(), &sp), 0);
    EXPECT_LT(static_cast<uint64_t>(sp.st_blocks) * 512, uint64_t{1} << 20);  // holes kept
  }
}

TEST_F(RestoreTest, LostPackFailsOnlyItsFiles) {
  // Drop the pack holding the small files' blobs (they are not in big.bin's packs).
  auto repo = Repository::Open(mem_, kPassword, 1);
  repo->LoadIndex();
  std::vector<std::pair<std::string, Node>> nodes;
  for (Node& n : repo->LoadTree(SourceTree(*repo))) {
    if (n.name == "many")
      for (Node& m : repo->LoadTree(*n.subtree)) nodes.emplace_back("/many/" + m.name, m);
    nodes.emplace_back("/" + n.name, n);
  }
  auto locs = repo->index().Lookup(BlobType::kData, nodes[0].second.content.empty()
                                                        ? BlobId()
                                                        : nodes[0].second.content[0]);
  for (const auto& [path, n] : nodes)
    if (path == "/many/f0") locs = repo->index().Lookup(BlobType::kData, n.content[0]);
  ASSERT_FALSE(locs.empty());
  std::set<std::string> lost_files;
  for (const auto& [path, n] : nodes)
    for (const BlobId& id : n.content)
      for (const BlobLocation& l : repo->index().Lookup(BlobType::kData, id))
        if (l.pack == locs[0].pack) lost_files.insert(path);
  mem_->Remove({FileType::kPack, locs[0].pack.Hex()});

  std::vector<std::string> warnings;
  fs::path out = root_ / "out";
  RestoreResult r = Restore(2, out, &warnings);
  EXPECT_GE(lost_files.size(), 300u);
  EXPECT_EQ(r.errors, warnings.size());
  for (const auto& w : warnings) {
    EXPECT_NE(w.find(locs[0].pack.Hex()), std::string::npos) << w;
    std::string path = w.substr(8, w.find(':') - 8);  // "restore /path: ..."
    EXPECT_TRUE(lost_files.count(path)) << w;
  }
  // Hard-linked names share one planned file: only the first name is reported.
  EXPECT_GE(warnings.size(), lost_files.size() - 1);
  for (const auto& [name, data] : files_) {
    if (lost_files.count("/" + name)) continue;
    EXPECT_EQ(ReadFile(out / name), data) << name;
  }
}

}  // namespace
}  // namespace haven
