#include "maintenance/find.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/deep_stack.h"
#include "core/error.h"
#include "repo/tree_stream.h"

namespace haven {

namespace {

// Go's path.Join for the clean absolute prefixes the walk builds.
std::string JoinPath(const std::string& prefix, const std::string& name) {
  return prefix == "/" ? "/" + name : prefix + "/" + name;
}

bool Before(const gojson::Timestamp& a, const gojson::Timestamp& b) {
  return a.sec < b.sec || (a.sec == b.sec && a.nsec < b.nsec);
}

// Trees as restic writes them are already in name order: only another tree is sorted (a
// stable sort moves every node several times even when nothing is out of place).
std::vector<Node> SortedByName(std::vector<Node> nodes) {
  auto by_name = [](const Node& a, const Node& b) { return a.name < b.name; };
  if (!std::is_sorted(nodes.begin(), nodes.end(), by_name))
    std::stable_sort(nodes.begin(), nodes.end(), by_name);
  return nodes;
}

// Recorded walks are kept up to about this much memory (a search for "*" records every node).
constexpr size_t kMaxVisitBytes = size_t{64} << 20;

}  // namespace

// What the walk of one tree at one path did, in order: its hits and its directories with
// what was decided for each, and whether it had nodes (restic's walk: an empty tree is not
// "all ignored"). Enough to walk it again without the tree.
struct Finder::Visit {
  struct Item {
    std::unique_ptr<const Node> hit;  // a node that matched (printed at `path`)
    std::string path;                 // set with `hit`
    bool dir = false;
    BlobId sub;          // dir: its subtree
    bool descend = false;  // dir: matched or a child may match
    std::shared_ptr<const Visit> child;  // dir: its walk when it was descended into
  };
  std::vector<Item> items;
  bool nonempty = false;

  // About the memory the record holds.
  size_t Bytes() const {
    size_t b = sizeof(Visit) + items.capacity() * sizeof(Item);
    for (const Item& it : items) {
      if (!it.hit) continue;
      const Node& n = *it.hit;
      b += sizeof(Node) + it.path.size() + n.name.size() + n.user.size() + n.group.size() +
           n.linktarget.size() + n.content.size() * sizeof(BlobId);
      for (const Xattr& x : n.xattrs)
        b += sizeof(Xattr) + x.name.size() + (x.value ? x.value->size() : 0);
    }
    return b;
  }
};

// One snapshot's walk (restic's walker.walk with find's callbacks).
class Finder::Walk {
 public:
  Walk(Finder& f, const FindCallbacks& cb) : f_(f), cb_(cb), stream_(f.repo_, f.threads_) {}

  void Run(const BlobId& root) {
    if (!f_.id_mode_) {
      auto seen = f_.visits_.find({root, "/"});
      if (seen != f_.visits_.end()) {
        Replay(*seen->second);
        return;
      }
    }
    std::vector<Node> nodes;
    try {
      nodes = stream_.Take(root);
    } catch (const Error& e) {
      if (cb_.unloadable) cb_.unloadable(root, e.what());
      return;
    }
    if (f_.id_mode_) {
      IdTree("/", root, std::move(nodes));
    } else {
      std::shared_ptr<const Visit> unused;
      PatternTree("/", root, std::move(nodes), &unused);
    }
  }

 private:
  // Takes a subtree; a failure is reported with the listing tree and skipped.
  bool Load(const BlobId& parent, const BlobId& id, std::vector<Node>* out) {
    try {
      *out = stream_.Take(id);
      return true;
    } catch (const Error& e) {
      if (cb_.unloadable) cb_.unloadable(parent, e.what());
      return false;
    }
  }

  static const BlobId& Subtree(const Node& n, const std::string& path) {
    if (!n.subtree)
      Fail(ErrorCode::kCorrupt, "subtree for node " + n.name + " in tree " + path + " is nil");
    return *n.subtree;
  }

  bool Matches(const std::string& path) const {
    return f_.list_.Matches(f_.pat_.ignore_case ? FoldCase(path) : path);
  }
  bool ChildMayMatch(const std::string& path) const {
    return f_.list_.ChildCouldMatch(f_.pat_.ignore_case ? FoldCase(path) : path);
  }
  bool InTime(const Node& n) const {
    if (f_.pat_.oldest && Before(n.mtime, *f_.pat_.oldest)) return false;
    if (f_.pat_.newest && Before(*f_.pat_.newest, n.mtime)) return false;
    return true;
  }

  // restic's walk: true when every node was left out (an empty tree: false). *visit: the
  // record of this walk, or null when a subtree could not be loaded in it (the record would
  // not repeat that report).
  bool PatternTree(const std::string& prefix, const BlobId& id, std::vector<Node> unsorted,
                   std::shared_ptr<const Visit>* visit) {
    TreeLevel level(depth_, prefix);
    const std::vector<Node> nodes = SortedByName(std::move(unsorted));
    // What each node does: a directory descends when it matched (in time) or a child may
    // match; the subtrees descended into are announced for loading ahead unless their walk
    // at this path was recorded.
    std::vector<char> hit(nodes.size()), descend(nodes.size());
    std::vector<BlobId> ahead;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      const std::string path = JoinPath(prefix, n.name);
      hit[i] = Matches(path) && InTime(n);
      if (n.type != NodeType::kDir) continue;
      descend[i] = hit[i] || ChildMayMatch(path);
      const BlobId& sub = Subtree(n, path);
      if (descend[i] && !f_.ignore_trees_.contains(sub) && !f_.visits_.contains({sub, path}))
        ahead.push_back(sub);
    }
    stream_.Expect(ahead);
    auto record = std::make_shared<Visit>();
    record->nonempty = !nodes.empty();
    bool complete = true;
    bool all_ignored = !nodes.empty();
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      if (n.type != NodeType::kDir) {
        if (hit[i]) {
          Visit::Item& item = record->items.emplace_back();
          item.path = JoinPath(prefix, n.name);
          item.hit = std::make_unique<const Node>(n);
          cb_.match(item.path, n);
          all_ignored = false;
        }
        continue;
      }
      Visit::Item& item = record->items.emplace_back();
      item.dir = true;
      item.sub = *n.subtree;
      item.descend = descend[i];
      const BlobId& sub = *n.subtree;
      if (f_.ignore_trees_.contains(sub)) continue;
      if (!descend[i]) {  // restic: ignored and skipped, remembered
        f_.ignore_trees_.insert(sub);
        continue;
      }
      const std::string path = JoinPath(prefix, n.name);
      auto seen = f_.visits_.find({sub, path});
      std::vector<Node> children;
      if (seen == f_.visits_.end() && !Load(id, sub, &children)) {
        complete = false;
        continue;
      }
      if (hit[i]) {
        item.path = path;
        item.hit = std::make_unique<const Node>(n);
        cb_.match(path, n);
      }
      all_ignored = false;
      bool sub_ignored;
      if (seen != f_.visits_.end()) {
        item.child = seen->second;
        sub_ignored = Replay(*item.child);
      } else {
        sub_ignored = PatternTree(path, sub, std::move(children), &item.child);
        if (!item.child) complete = false;
      }
      if (sub_ignored) f_.ignore_trees_.insert(sub);
    }
    const size_t bytes = complete ? record->Bytes() : 0;
    if (complete && f_.visit_bytes_ + bytes <= kMaxVisitBytes) {
      f_.visit_bytes_ += bytes;
      f_.visits_.emplace(Finder::VisitKey{id, prefix}, record);
      *visit = std::move(record);
    } else {
      *visit = nullptr;  // not kept, and so neither are the walks around it
    }
    return all_ignored;
  }

  // PatternTree again from its record: the same hits in the same order, restic's ignoreTrees
  // decisions taken with the set as it is now (it only grows, so whatever was skipped when
  // recorded is skipped again, and a recorded subtree may be skipped now).
  bool Replay(const Visit& v) {
    bool all_ignored = v.nonempty;
    for (const Visit::Item& item : v.items) {
      if (!item.dir) {
        cb_.match(item.path, *item.hit);
        all_ignored = false;
        continue;
      }
      if (f_.ignore_trees_.contains(item.sub)) continue;
      if (!item.descend) {
        f_.ignore_trees_.insert(item.sub);
        continue;
      }
      if (item.hit) cb_.match(item.path, *item.hit);
      all_ignored = false;
      if (Replay(*item.child)) f_.ignore_trees_.insert(item.sub);
    }
    return all_ignored;
  }

  bool WantTree(const BlobId& sub) const {
    const auto& t = *f_.ids_.trees;
    return t.contains(sub.Hex()) || t.contains(sub.Short());
  }

  // Id mode: every tree. False when the walk of this snapshot is to end.
  bool IdTree(const std::string& prefix, const BlobId& id, std::vector<Node> unsorted) {
    TreeLevel level(depth_, prefix);
    const std::vector<Node> nodes = SortedByName(std::move(unsorted));
    std::vector<BlobId> ahead;
    for (const Node& n : nodes)
      if (n.type == NodeType::kDir) ahead.push_back(Subtree(n, JoinPath(prefix, n.name)));
    stream_.Expect(ahead);
    for (const Node& n : nodes) {
      const std::string path = JoinPath(prefix, n.name);
      if (n.type == NodeType::kFile && f_.ids_.blobs) Blobs(n, path, id);
      if (n.type != NodeType::kDir) continue;
      std::vector<Node> children;
      if (!Load(id, *n.subtree, &children)) continue;
      if (f_.ids_.trees && WantTree(*n.subtree)) {
        cb_.tree(n.subtree->Hex(), path);
        ++f_.trees_found_;
        if (f_.trees_found_ >= f_.ids_.trees->size() && !f_.ids_.blobs) return false;
      }
      if (!IdTree(path, *n.subtree, std::move(children))) return false;
    }
    return true;
  }

  void Blobs(const Node& n, const std::string& path, const BlobId& parent) {
    auto& want = *f_.ids_.blobs;
    for (const BlobId& b : n.content) {
      const std::string full = b.Hex();
      if (!want.contains(full)) {
        auto it = want.find(b.Short());
        if (it == want.end()) continue;
        want.erase(it);  // restic replaces the short id by the full one
        want.insert(full);
      }
      cb_.blob(full, path, parent);
    }
  }

  Finder& f_;
  const FindCallbacks& cb_;
  OrderedTreeStream stream_;
  int depth_ = 0;
};

Finder::Finder(IndexedRepository& repo, FindPatterns patterns, int threads)
    : repo_(repo), threads_(threads > 0 ? threads : repo.threads()), id_mode_(false),
      pat_(std::move(patterns)) {
  std::vector<std::string> p = pat_.patterns;
  if (pat_.ignore_case)
    for (auto& s : p) s = FoldCase(s);
  list_ = PatternList(std::move(p));
}

Finder::Finder(IndexedRepository& repo, FindIds ids, int threads)
    : repo_(repo), threads_(threads > 0 ? threads : repo.threads()), id_mode_(true),
      ids_(std::move(ids)) {}

void Finder::Search(const BlobId& root, const FindCallbacks& cb) {
  Walk w(*this, cb);
  RunOnDeepStack([&] { w.Run(root); });  // one recursion per level
}

// ---- --oldest / --newest -------------------------------------------------------------------

namespace {

struct Parsed {
  struct tm tm {};
  std::optional<int> offset;  // seconds east of UTC, when the text gives one
};

int Month(const char* s) {
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i)
    if (std::strncmp(s, kMonths[i], 3) == 0) return i;
  return -1;
}

// A zone abbreviation: the local zone's (standard or daylight) or UTC/GMT has its offset;
// any other is taken as UTC (Go's "fabricated location ... with a zero offset").
std::optional<int> ZoneOffset(const std::string& abbr, const struct tm& local_guess) {
  if (abbr == "UTC" || abbr == "GMT") return 0;
  tzset();
  for (int dst = 0; dst < 2; ++dst)
    if (tzname[dst] && abbr == tzname[dst]) {
      struct tm t = local_guess;
      t.tm_isdst = dst;
      time_t s = mktime(&t);
      struct tm back;
      localtime_r(&s, &back);
      return static_cast<int>(back.tm_gmtoff);
    }
  return 0;
}

bool ParseDateTime(const std::string& s, bool dotted, Parsed* p) {
  int d1 = 0, d2 = 0, y = 0, hh = 0, mm = 0, ss = 0, n = 0;
  const char* fmt = dotted ? "%2d.%2d.%4d%n" : "%4d-%2d-%2d%n";
  if (std::sscanf(s.c_str(), fmt, dotted ? &d1 : &y, &d2, dotted ? &y : &d1, &n) != 3) return false;
  const int day = d1, month = d2;
  p->tm.tm_year = y - 1900;
  p->tm.tm_mon = month - 1;
  p->tm.tm_mday = day;
  std::string rest = s.substr(n);
  if (rest.empty()) return true;
  int m = 0;
  if (std::sscanf(rest.c_str(), " %2d:%2d%n", &hh, &mm, &m) != 2 || rest[0] != ' ') return false;
  p->tm.tm_hour = hh;
  p->tm.tm_min = mm;
  rest = rest.substr(m);
  if (rest.empty()) return true;
  if (std::sscanf(rest.c_str(), ":%2d%n", &ss, &m) != 1) return false;
  p->tm.tm_sec = ss;
  rest = rest.substr(m);
  if (rest.empty()) return true;
  if (rest.size() == 6 && rest[0] == ' ' && (rest[1] == '+' || rest[1] == '-')) {
    int off = 0;
    if (std::sscanf(rest.c_str() + 2, "%4d", &off) != 1) return false;
    int secs = (off / 100) * 3600 + (off % 100) * 60;
    p->offset = rest[1] == '-' ? -secs : secs;
    return true;
  }
  if (rest.size() >= 2 && rest[0] == ' ') {
    p->offset = ZoneOffset(rest.substr(1), p->tm);
    return true;
  }
  return false;
}

// "Mon Jan 2 15:04:05 -0700 MST 2006"
bool ParseUnixDate(const std::string& s, Parsed* p) {
  char wd[4], mon[4], zone[16];
  int day, hh, mm, ss, off, y, n = 0;
  char sign;
  if (std::sscanf(s.c_str(), "%3s %3s %d %d:%d:%d %c%4d %15s %d%n", wd, mon, &day, &hh, &mm,
                  &ss, &sign, &off, zone, &y, &n) != 10 ||
      static_cast<size_t>(n) != s.size() || (sign != '+' && sign != '-'))
    return false;
  const int month = Month(mon);
  if (month < 0) return false;
  p->tm.tm_year = y - 1900;
  p->tm.tm_mon = month;
  p->tm.tm_mday = day;
  p->tm.tm_hour = hh;
  p->tm.tm_min = mm;
  p->tm.tm_sec = ss;
  const int secs = (off / 100) * 3600 + (off % 100) * 60;
  p->offset = sign == '-' ? -secs : secs;
  return true;
}

bool ValidFields(const struct tm& t) {
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return t.tm_mon >= 0 && t.tm_mon < 12 && t.tm_mday >= 1 && t.tm_mday <= kDays[t.tm_mon] &&
         t.tm_hour >= 0 && t.tm_hour < 24 && t.tm_min >= 0 && t.tm_min < 60 &&
         t.tm_sec >= 0 && t.tm_sec < 60;
}

}  // namespace

std::optional<gojson::Timestamp> ParseFindTime(const std::string& s) {
  Parsed p;
  if (!ParseDateTime(s, false, &p) && !(p = Parsed{}, ParseDateTime(s, true, &p)) &&
      !(p = Parsed{}, ParseUnixDate(s, &p)))
    return std::nullopt;
  if (!ValidFields(p.tm)) return std::nullopt;
  int64_t sec;
  if (p.offset) {
    struct tm t = p.tm;
    sec = static_cast<int64_t>(timegm(&t)) - *p.offset;
  } else {
    struct tm t = p.tm;
    t.tm_isdst = -1;
    sec = static_cast<int64_t>(mktime(&t));
  }
  return gojson::LocalTime(sec, 0);
}

}  // namespace haven
