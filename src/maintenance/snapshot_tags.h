// restic 0.14's tag edits of a snapshot (`tag --set/--add/--remove`): the new tag list and
// whether it changed, with restic's exact rules, so the resulting snapshot is restic's.
#pragma once

#include <string>
#include <vector>

#include "repo/snapshot.h"

namespace haven {

// restic's TagLists.Flatten: every tag of every comma-separated list, in order, without
// the empty ones.
std::vector<std::string> FlattenTagLists(const std::vector<std::string>& lists);

// Applies the edit to s.tags; true when the tags changed. A non-empty `set` replaces the
// tags (and counts as a change even when equal); otherwise `add` appends the tags not yet
// present and `remove` takes each named tag out by moving the last tag into its place (Go's
// swap-remove: the order of the remaining tags is restic's).
bool ChangeTags(Snapshot& s, const std::vector<std::string>& set,
                const std::vector<std::string>& add, const std::vector<std::string>& remove);

}  // namespace haven
