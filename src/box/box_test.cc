// Box: the verbs through the library, and hostile boxes (a box made elsewhere is untrusted):
// crafted trees with "..", "/", absolute, empty and duplicate names and symlink tricks are
// refused by extract without writing outside the target.
#include "box/box.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "chunker/chunker.h"
#include "core/error.h"
#include "repo/host_info.h"
#include "repo/write_session.h"

namespace haven::box {
namespace {

namespace fs = std::filesystem;

class BoxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/haven-box-test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    secret_ = KeySecret(std::string(64, 'a'));
    auto be = Backend();
    Box::Create(be, storage_, secret_, 2);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::shared_ptr<BoxBackend> Backend() {
    box_ = std::make_shared<BoxBackend>((dir_ / "b.hbox").string());
    storage_ = box_;
    return box_;
  }
  std::unique_ptr<Box> Open() {
    auto be = Backend();
    return Box::Open(be, storage_, secret_, 2);
  }

  Node FileNode(WriteSession& s, const std::string& name, const std::string& data) {
    Node n;
    n.name = name;
    n.type = NodeType::kFile;
    n.mode = 0644;
    BlobId id(Sha256(AsBytes(data)));
    s.SaveBlob(BlobType::kData, id, AsBytes(data));
    n.content = {id};
    n.size = data.size();
    return n;
  }
  Node Symlink(const std::string& name, const std::string& target) {
    Node n;
    n.name = name;
    n.type = NodeType::kSymlink;
    n.mode = gomode::kSymlink | 0777;
    n.linktarget = target;
    return n;
  }
  Node Dir(const std::string& name, const BlobId& tree) {
    Node n;
    n.name = name;
    n.type = NodeType::kDir;
    n.mode = gomode::kDir | 0755;
    n.subtree = tree;
    return n;
  }
  // Tree bytes written as given (unsorted, duplicates, any names): what a hostile box holds.
  BlobId RawTree(WriteSession& s, const std::vector<Node>& nodes) {
    std::string json = "{\"nodes\":[";
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i) json += ',';
      AppendNodeJson(json, nodes[i]);
    }
    json += "]}\n";
    BlobId id(Sha256(AsBytes(json)));
    s.SaveBlob(BlobType::kTree, id, AsBytes(json));
    return id;
  }
  // Makes `tree` the box's newest snapshot, committed.
  void CommitHead(Box& b, WriteSession& s, const BlobId& tree) {
    s.Flush();
    Snapshot snap;
    snap.time = NowLocal();
    snap.time.sec += 10;  // newer than the box's first snapshot
    snap.tree = tree;
    snap.paths = {"/"};
    snap.hostname = "evil";
    b.repo().SaveJson(FileType::kSnapshot, snap.ToJson());
    box_->Commit();
  }
  // Every path below `root` (relative).
  static std::set<std::string> Listing(const fs::path& root) {
    std::set<std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it)
      out.insert(it->path().lexically_relative(root).string());
    return out;
  }

  fs::path dir_;
  Secret secret_;
  std::shared_ptr<BoxBackend> box_;
  std::shared_ptr<haven::Backend> storage_;
};

TEST_F(BoxTest, VerbsMakeOneSnapshotEach) {
  fs::create_directories(dir_ / "src/sub");
  std::ofstream(dir_ / "src/sub/f.txt") << "content";
  auto b = Open();
  ChangeResult add = b->Add((dir_ / "src").string(), "/x/src", AddOptions{});
  EXPECT_FALSE(add.incomplete);
  b = Open();
  std::string got;
  b->Cat("/x/src/sub/f.txt", [&](ByteView v) { got.append(AsChars(v)); });
  EXPECT_EQ(got, "content");
  b->Move("/x/src/sub/f.txt", "/top.txt");
  b = Open();
  b->Remove("/x");
  b = Open();
  std::vector<Entry> all = b->List("");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].path, "/top.txt");
  std::vector<LogEntry> log = b->Log();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].action, "create");
  EXPECT_EQ(log[1].action, "add");
  EXPECT_EQ(log[2].action, "mv");
  EXPECT_EQ(log[3].action, "rm");
  EXPECT_EQ(log[3].snapshot.parent, log[2].id);
  EXPECT_THROW(b->Cat("/x/../top.txt", [](ByteView) {}), Error);
  EXPECT_THROW(b->Add((dir_ / "src").string(), "/../escape", AddOptions{}), Error);
  EXPECT_THROW(b->Move("/top.txt", "/top.txt/inside"), Error);
}

// One huge file stored with one worker and with several: the same blobs, cut where
// restic's chunker cuts (ChunkLengths over the whole file with the box's polynomial).
TEST_F(BoxTest, OneFileGivesTheSameBlobsWithAnyJobsCutAsRestic) {
  std::mt19937_64 rng(42);
  std::string data;
  while (data.size() < (20u << 20)) {  // text runs and random runs, 20 MiB
    if ((rng() & 1) != 0) {
      for (int i = 0; i < 40000; ++i) data += "line " + std::to_string(rng() % 1000) + " ok\n";
    } else {
      for (int i = 0; i < 200000; ++i) data += static_cast<char>(rng());
    }
  }
  std::ofstream(dir_ / "huge.bin", std::ios::binary) << data;
  std::vector<BlobId> content[2];
  int slot = 0;
  for (int jobs : {1, 4}) {
    auto b = Open();
    AddOptions o;
    o.jobs = jobs;
    const std::string dest = "/j" + std::to_string(jobs);
    b->Add((dir_ / "huge.bin").string(), dest, o);
    b = Open();
    std::vector<Entry> e = b->List(dest);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].node.size, data.size());
    content[slot++] = e[0].node.content;
    std::string got;
    b->Cat(dest, [&](ByteView v) { got.append(AsChars(v)); });
    EXPECT_TRUE(got == data) << "jobs " << jobs;
  }
  EXPECT_EQ(content[0], content[1]);
  auto b = Open();
  std::vector<BlobId> want;
  size_t off = 0;
  for (size_t n : chunker::ChunkLengths(b->repo().chunker_tables(), AsBytes(data))) {
    want.emplace_back(Sha256(AsBytes(std::string_view(data).substr(off, n))));
    off += n;
  }
  EXPECT_GT(want.size(), 5u);
  EXPECT_EQ(content[0], want);
}

TEST_F(BoxTest, KeyValidation) {
  EXPECT_THROW(KeySecret("abc"), Error);
  EXPECT_THROW(KeySecret(std::string(63, 'a') + "g"), Error);
  EXPECT_EQ(KeySecret(std::string(64, 'A')).value, std::string(64, 'a'));
  EXPECT_EQ(KeyParams(KeySecret(std::string(64, '0'))).n, 2u);
  EXPECT_EQ(KeyParams(Secret{"pw", false}).n, 32768u);
  // The box opens with its key only.
  secret_ = KeySecret(std::string(64, 'b'));
  try {
    Open();
    ADD_FAILURE() << "opened with another key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kWrongPassword);
  }
}

TEST_F(BoxTest, HostileNamesAreRefusedAndNothingIsWrittenOutside) {
  fs::create_directories(dir_ / "outside");
  {
    auto b = Open();
    WriteSession s(b->repo());
    BlobId inner = RawTree(s, {FileNode(s, "passwd", "pwned")});
    BlobId root = RawTree(
        s, {FileNode(s, "..", "dotdot"), FileNode(s, "../outside/f", "slash"),
            FileNode(s, "/abs", "absolute"), FileNode(s, "", "empty"), FileNode(s, ".", "dot"),
            FileNode(s, "ok.txt", "fine"),
            // a link and a directory of one name: the directory would be entered via the link
            Symlink("dup", (dir_ / "outside").string()), Dir("dup", inner),
            // a link to outside and nothing through it
            Symlink("esc", (dir_ / "outside").string()), Dir("..", inner)});
    CommitHead(*b, s, root);
  }
  auto b = Open();
  ExtractOptions o;
  o.target = (dir_ / "target").string();
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  ExtractResult r = b->Extract("", o);
  EXPECT_GT(r.restore.errors, 0u);
  EXPECT_TRUE(fs::is_empty(dir_ / "outside"));
  std::set<std::string> got = Listing(dir_ / "target");
  EXPECT_EQ(got, (std::set<std::string>{"ok.txt", "esc"})) << ::testing::PrintToString(got);
  EXPECT_TRUE(fs::is_symlink(dir_ / "target/esc"));
  // Paths that name a hostile entry are refused before anything is read.
  EXPECT_THROW(b->Extract("/..", o), Error);
  EXPECT_THROW(b->Extract("/../outside/f", o), Error);
  // `box list` names no path a hostile name fakes ("../outside/f" would read as a path).
  try {
    b->List("");
    ADD_FAILURE() << "a listing of unsafe names";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("unsafe name"), std::string::npos) << e.what();
  }
}

TEST_F(BoxTest, ALinkLeftInTheTargetIsNeverFollowed) {
  fs::create_directories(dir_ / "outside");
  fs::create_directories(dir_ / "target");
  // The target already holds a link named like a directory of the box.
  fs::create_directory_symlink(dir_ / "outside", dir_ / "target/d");
  {
    auto b = Open();
    WriteSession s(b->repo());
    BlobId inner = RawTree(s, {FileNode(s, "f", "through the link")});
    CommitHead(*b, s, RawTree(s, {Dir("d", inner)}));
  }
  auto b = Open();
  ExtractOptions o;
  o.target = (dir_ / "target").string();
  auto read = [&] {
    std::ifstream in(dir_ / "target/d/f");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  // The link is replaced by the box's directory (restorer's rule), never followed.
  b->Extract("", o);
  EXPECT_TRUE(fs::is_empty(dir_ / "outside"));
  EXPECT_FALSE(fs::is_symlink(dir_ / "target/d"));
  EXPECT_EQ(read(), "through the link");
  // An existing file is kept unless --overwrite.
  std::ofstream(dir_ / "target/d/f") << "edited";
  ExtractResult kept = b->Extract("/d", o);
  EXPECT_EQ(kept.kept, 1u);
  EXPECT_EQ(read(), "edited");
  o.overwrite = true;
  b->Extract("/d", o);
  EXPECT_EQ(read(), "through the link");
  EXPECT_TRUE(fs::is_empty(dir_ / "outside"));
}

}  // namespace
}  // namespace haven::box
