#include "maintenance/snapshot_tags.h"

#include <algorithm>

#include "maintenance/forget_policy.h"

namespace haven {

std::vector<std::string> FlattenTagLists(const std::vector<std::string>& lists) {
  std::vector<std::string> out;
  for (const std::string& l : lists)
    for (std::string& t : forget::SplitTagList(l))
      if (!t.empty()) out.push_back(std::move(t));
  return out;
}

bool ChangeTags(Snapshot& s, const std::vector<std::string>& set,
                const std::vector<std::string>& add, const std::vector<std::string>& remove) {
  if (!set.empty()) {
    s.tags = set;
    return true;
  }
  bool changed = false;
  for (const std::string& a : add) {
    if (std::find(s.tags.begin(), s.tags.end(), a) != s.tags.end()) continue;
    s.tags.push_back(a);
    changed = true;
  }
  for (const std::string& r : remove) {
    auto it = std::find(s.tags.begin(), s.tags.end(), r);
    if (it == s.tags.end()) continue;
    *it = s.tags.back();
    s.tags.pop_back();
    changed = true;
  }
  return changed;
}

}  // namespace haven
