// `haven repair packs ID...` (restic 0.16; without its RESTIC_FEATURES gate, as restic
// 0.17): salvage the intact blobs of damaged packs, rewrite the index without them, remove
// them (maintenance/repair_packs). Copies of the packs are left in the current folder.
// Registered under `repair` by cmd_repair.cc.
#include <algorithm>
#include <iostream>

#include "cli/common.h"
#include "cli/mount_commands.h"
#include "core/error.h"
#include "maintenance/repair_packs.h"

namespace haven::cli {

namespace {

std::vector<PackId> ParsePackIds(const std::vector<std::string>& args) {
  std::vector<PackId> ids;
  for (const auto& a : args) {
    if (a.size() != 64) Fail(ErrorCode::kInvalidArgument, "invalid length for ID");
    auto id = PackId::FromHex(a);
    if (!id) Fail(ErrorCode::kInvalidArgument, "invalid ID \"" + a + "\"");
    if (std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
  }
  if (ids.empty()) Fail(ErrorCode::kInvalidArgument, "no ids specified");
  return ids;
}

void RunRepairPacks(const std::vector<std::string>& args) {
  const auto ids = ParsePackIds(args);
  auto repo = OpenRepository();
  auto lock = LockRepository(*repo, true);
  std::shared_ptr<IndexedRepository> indexed = IndexedRepository::Load(*repo);
  RepairPacksOptions o;
  o.threads = Jobs();
  o.warn = [](const std::string& s) { Warn(s); };
  WriteSession session(*indexed, GlobalWriteOptions());
  RepairPacks(*indexed, session, ids, o);
  Warn("\nUse `haven repair snapshots --forget` to remove the corrupted data blobs from all "
       "snapshots");
}

}  // namespace

void RegisterRepairPacks(CLI::App* repair) {
  static std::vector<std::string> ids;
  auto* cmd = repair->add_subcommand("packs", "salvage damaged pack files");
  cmd->add_option("ids", ids, "pack IDs");
  cmd->callback([] { RunRepairPacks(ids); });
}

}  // namespace haven::cli
