// What prune prints about its plan, as restic 0.14's printPruneStats (and, for a dry run with
// -vv, the packs it would touch). Shared by `prune` and `forget --prune`.
#pragma once

#include "maintenance/prune.h"

namespace haven::cli {

void PrintPrunePlan(const PrunePlan& plan, bool dry_run);

}  // namespace haven::cli
