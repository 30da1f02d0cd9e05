// list: restic 0.14's `list blobs|packs|index|snapshots|keys|locks`: the ids of the
// repository's files of a type, one per line; `blobs`: "TYPE ID" for every entry of every
// index file (duplicates included, as restic). A shared lock is taken except for `locks`.
#include <iostream>

#include "cli/common.h"
#include "cli/more_commands.h"
#include "core/error.h"
#include "repo/index.h"

namespace haven::cli {

namespace {

constexpr const char* kListUse = "list [flags] [blobs|packs|index|snapshots|keys|locks]";

void ListBlobs(Repository& repo) {
  for (const FileId& id : repo.ListIds(FileType::kIndex)) {
    const IndexFile f = IndexFile::Parse(repo.LoadJson(FileType::kIndex, id), "index " + id.Hex());
    std::string out;
    for (const auto& pack : f.packs)
      for (const auto& b : pack.blobs)
        out += std::string(BlobTypeName(b.type)) + " " + b.id.Hex() + "\n";
    std::cout << out;
  }
}

void RunList(const std::vector<std::string>& args) {
  if (args.size() != 1) Fail(ErrorCode::kInvalidArgument, std::string("type not specified, usage: ") + kListUse);
  const std::string& what = args[0];
  FileType t = FileType::kPack;
  if (what == "packs") {
    t = FileType::kPack;
  } else if (what == "index") {
    t = FileType::kIndex;
  } else if (what == "snapshots") {
    t = FileType::kSnapshot;
  } else if (what == "keys") {
    t = FileType::kKey;
  } else if (what == "locks") {
    t = FileType::kLock;
  } else if (what != "blobs") {
    Fail(ErrorCode::kInvalidArgument, "invalid type");
  }
  OpenOptions oo;
  oo.use_cache = what != "locks";
  auto repo = OpenRepository(oo);
  std::unique_ptr<Lock> lock;
  if (what != "locks") lock = LockRepository(*repo, false);
  if (what == "blobs") return ListBlobs(*repo);
  std::string out;
  repo->backend().List(t, [&](const FileInfo& fi) {
    out += fi.name + "\n";
    if (out.size() > (1 << 20)) {
      std::cout << out;
      out.clear();
    }
  });
  std::cout << out;
}

}  // namespace

void RegisterList(CLI::App& app) {
  static std::vector<std::string> args;
  auto* cmd = app.add_subcommand("list", "list objects in the repository");
  cmd->add_option("type", args, "blobs, packs, index, snapshots, keys or locks");
  cmd->callback([] { RunList(args); });
}

}  // namespace haven::cli
