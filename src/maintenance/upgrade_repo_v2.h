// restic 0.14's upgrade_repo_v2 migration (internal/migrations/upgrade_repo_v2.go): a
// version 1 repository becomes version 2 by rewriting its config with "version":2, the same
// id and chunker polynomial. The stored config is first copied to a new directory under
// `tmp_base` ("restic-migrate-upgrade-repo-v2-XXXXXX/config"); then the config is removed
// and the new one saved (haven's backends never overwrite, as restic does on backends
// without atomic replace). When the save fails, the old bytes are put back and the error
// names the copy, in restic's words; on success the copy is deleted. The caller holds an
// exclusive lock and has run check (restic's RepoCheck).
#pragma once

#include <string>

#include "repo/repository.h"

namespace haven {

inline constexpr const char* kUpgradeRepoV2 = "upgrade_repo_v2";
inline constexpr const char* kUpgradeRepoV2Desc = "upgrade a repository to version 2";

// restic's Check: the repository is version 1.
bool UpgradeRepoV2Applicable(const Repository& repo);
// Throws haven::Error (kIo) when the new config cannot be stored.
void UpgradeRepoV2(Repository& repo, const std::string& tmp_base);

}  // namespace haven
