#include "maintenance/find.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

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

std::vector<Node> SortedByName(std::vector<Node> nodes) {
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const Node& a, const Node& b) { return a.name < b.name; });
  return nodes;
}

}  // namespace

// One snapshot's walk (restic's walker.walk with find's callbacks).
class Finder::Walk {
 public:
  Walk(Finder& f, const FindCallbacks& cb) : f_(f), cb_(cb), stream_(f.repo_, f.threads_) {}

  void Run(const BlobId& root) {
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
      PatternTree("/", root, std::move(nodes));
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

  // restic's walk: true when every node was left out (an empty tree: false).
  bool PatternTree(const std::string& prefix, const BlobId& id, std::vector<Node> unsorted) {
    const std::vector<Node> nodes = SortedByName(std::move(unsorted));
    // What each node does: a directory descends when it matched (in time) or a child may
    // match; the subtrees descended into are announced for loading ahead.
    std::vector<char> hit(nodes.size()), descend(nodes.size());
    std::vector<BlobId> ahead;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      const std::string path = JoinPath(prefix, n.name);
      hit[i] = Matches(path) && InTime(n);
      if (n.type != NodeType::kDir) continue;
      descend[i] = hit[i] || ChildMayMatch(path);
      const BlobId& sub = Subtree(n, path);
      if (descend[i] && !f_.ignore_trees_.contains(sub)) ahead.push_back(sub);
    }
    stream_.Expect(ahead);
    bool all_ignored = !nodes.empty();
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      const std::string path = JoinPath(prefix, n.name);
      if (n.type != NodeType::kDir) {
        if (hit[i]) {
          cb_.match(path, n);
          all_ignored = false;
        }
        continue;
      }
      const BlobId& sub = *n.subtree;
      if (f_.ignore_trees_.contains(sub)) continue;
      if (!descend[i]) {  // restic: ignored and skipped, remembered
        f_.ignore_trees_.insert(sub);
        continue;
      }
      std::vector<Node> children;
      if (!Load(id, sub, &children)) continue;
      if (hit[i]) cb_.match(path, n);
      all_ignored = false;
      if (PatternTree(path, sub, std::move(children))) f_.ignore_trees_.insert(sub);
    }
    return all_ignored;
  }

  bool WantTree(const BlobId& sub) const {
    const auto& t = *f_.ids_.trees;
    return t.contains(sub.Hex()) || t.contains(sub.Short());
  }

  // Id mode: every tree. False when the walk of this snapshot is to end.
  bool IdTree(const std::string& prefix, const BlobId& id, std::vector<Node> unsorted) {
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
  w.Run(root);
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
