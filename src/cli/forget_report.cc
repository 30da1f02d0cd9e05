#include "cli/forget_report.h"

#include "cli/snapshot_filter.h"
#include "cli/snapshot_table.h"
#include "repo/gojson.h"

namespace haven::cli {

namespace {

using forget::SnapshotEntry;

void AppendSnapshotList(std::string& out, const std::vector<SnapshotEntry>& list) {
  if (list.empty()) {
    out += "null";  // a nil slice in restic's ForgetGroup
    return;
  }
  out += '[';
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out += ',';
    out += SnapshotListJson(list[i].first, list[i].second, nullptr);
  }
  out += ']';
}

// restic's KeepReason counters: the non-zero ones (omitempty).
void AppendCounters(std::string& out, const forget::KeepCounters& c) {
  out += '{';
  bool first = true;
  auto counter = [&](const char* name, int v) {
    if (v == 0) return;
    if (!first) out += ',';
    first = false;
    out += std::string("\"") + name + "\":" + std::to_string(v);
  };
  counter("last", c.last);
  counter("hourly", c.hourly);
  counter("daily", c.daily);
  counter("weekly", c.weekly);
  counter("monthly", c.monthly);
  counter("yearly", c.yearly);
  out += '}';
}

void AppendReasons(std::string& out, const std::vector<forget::KeepReason>& reasons) {
  if (reasons.empty()) {
    out += "null";
    return;
  }
  out += '[';
  for (size_t i = 0; i < reasons.size(); ++i) {
    const auto& k = reasons[i];
    if (i) out += ',';
    out += "{\"snapshot\":" + k.snapshot.ToJson() + ",\"matches\":";
    gojson::AppendStringList(out, k.matches);
    out += ",\"counters\":";
    AppendCounters(out, k.counters);
    out += '}';
  }
  out += ']';
}

}  // namespace

std::string ForgetGroupJson(const forget::SnapshotGroup& g, const forget::PolicyResult& r) {
  std::string out = "{\"tags\":";
  gojson::AppendStringList(out, g.tags);
  out += ",\"host\":";
  gojson::AppendString(out, g.hostname);
  out += ",\"paths\":";
  gojson::AppendStringList(out, g.paths);
  out += ",\"keep\":";
  AppendSnapshotList(out, r.keep);
  out += ",\"remove\":";
  AppendSnapshotList(out, r.remove);
  out += ",\"reasons\":";
  AppendReasons(out, r.reasons);
  out += '}';
  return out;
}

std::string ForgetGroupText(const forget::PolicyResult& r, bool compact) {
  std::string out;
  if (!r.keep.empty())
    out += "keep " + std::to_string(r.keep.size()) + " snapshots:\n" +
           SnapshotTable(r.keep, &r.reasons, compact) + '\n';
  if (!r.remove.empty())
    out += "remove " + std::to_string(r.remove.size()) + " snapshots:\n" +
           SnapshotTable(r.remove, nullptr, compact) + '\n';
  return out;
}

std::string IdSetString(const std::set<FileId>& ids) {
  std::string s = "{";
  bool first = true;
  for (const auto& id : ids) {
    if (!first) s += ' ';
    first = false;
    s += id.Short();
  }
  return s + "}";
}

}  // namespace haven::cli
