// restic 0.14's SnapshotsDirStructure (internal/fuse/snapshots_dirstruct.go), rewritten.
#include "mount/snapshot_dirs.h"

#include <map>

namespace haven::mount {

namespace {

// Go's path.Clean for the absolute paths built here ("" stays the root "").
std::string CleanPath(std::string_view p) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (auto part : parts) {
    out += '/';
    out += part;
  }
  return out;  // "/" cleans to "" here: the root's key
}

// The leading directories of a template before its first variable (restic's
// staticPrefix): "hosts/%h/%T" -> "hosts"; "" when there is no variable or no '/'.
std::string StaticPrefix(std::string_view templ) {
  bool in_verb = false;
  size_t start = std::string_view::npos;
  for (size_t i = 0; i < templ.size(); i++) {
    const char c = templ[i];
    if (!in_verb) {
      in_verb = c == '%';
      continue;
    }
    in_verb = false;
    if (std::string_view("iIuhtT").find(c) != std::string_view::npos) {
      start = i;
      break;
    }
  }
  if (start == std::string_view::npos) return "";
  std::string_view p = templ.substr(0, start);
  const size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? "" : std::string(p.substr(0, slash));
}

}  // namespace

std::vector<std::string> DefaultPathTemplates() {
  return {"ids/%i", "snapshots/%T", "hosts/%h/%T", "tags/%t/%T"};
}

std::string FilenameFromTag(std::string_view tag) {
  if (tag.empty() || tag == ".") return "_";
  if (tag == "..") return "__";
  std::string out(tag);
  for (char& c : out)
    if (c == '/' || c == '\0') c = '_';
  return out;
}

std::pair<std::vector<std::string>, std::string> PathsFromSnapshot(
    std::string_view templ, const std::string& time_str, const FileId& id, const Snapshot& sn) {
  std::vector<std::string> out(1);
  bool in_verb = false, write_time = false;
  for (char c : templ) {
    if (write_time) {
      for (auto& o : out) o += time_str;
      write_time = false;
    }
    if (!in_verb) {
      if (c == '%')
        in_verb = true;
      else
        for (auto& o : out) o += c;
      continue;
    }
    in_verb = false;
    std::string repl;
    switch (c) {
      case 'T': write_time = true; continue;
      case 't': {
        if (sn.tags.empty()) return {{}, ""};
        std::vector<std::string> next;
        for (const auto& tag : sn.tags)
          for (const auto& o : out) next.push_back(o + FilenameFromTag(tag));
        out = std::move(next);
        continue;
      }
      case 'i': repl = id.Short(); break;
      case 'I': repl = id.Hex(); break;
      // Host and user names come from the repository: one file name each, never a path
      // ("../snapshots" as a host name would otherwise land in snapshots/ and hide the
      // snapshot of that time; a NUL would make a name readdir shows but lookup misses).
      case 'u': repl = FilenameFromTag(sn.username); break;
      case 'h': repl = FilenameFromTag(sn.hostname); break;
      default: repl = std::string(1, c);
    }
    for (auto& o : out) o += repl;
  }
  return {out, write_time ? time_str : ""};
}

void SnapshotDirs::Mount(const std::string& path, int snapshot, const std::string& link,
                         const std::string& child) {
  MetaEntry& e = entries_[path];
  if (snapshot >= 0) {
    e.snapshot = snapshot;
    e.link = link;
  } else if (!child.empty()) {
    e.names.insert(child);
  }
  // Each parent gets the last component as a name: a loop, not one call per component (a
  // path with 100,000 components must not exhaust the stack).
  for (std::string p = path; ;) {
    const size_t slash = p.rfind('/');
    if (slash == std::string::npos) break;
    entries_[p.substr(0, slash)].names.insert(p.substr(slash + 1));
    p.resize(slash);
  }
}

SnapshotDirs::SnapshotDirs(const SnapshotList& snapshots,
                           const std::vector<std::string>& path_templates,
                           const std::string& time_template) {
  Mount("", -1, "", "");
  for (const auto& t : path_templates) {
    const std::string p = StaticPrefix(t);
    if (!p.empty()) Mount(CleanPath("/" + p), -1, "", "");
  }
  std::map<std::string, gojson::Timestamp> latest;
  for (size_t i = 0; i < snapshots.size(); i++) {
    const auto& [id, sn] = snapshots[i];
    const std::string time_str = FormatGoTime(sn.time, time_template);
    for (const auto& t : path_templates) {
      auto [paths, suffix] = PathsFromSnapshot(t, time_str, id, sn);
      for (std::string p : paths) {
        if (!p.empty()) p = "/" + p;
        std::string name = suffix;  // restic's uniqueName: name, name-1, name-2, ...
        for (int n = 1; entries_.contains(p + name); n++) name = suffix + "-" + std::to_string(n);
        Mount(CleanPath(p + name), static_cast<int>(i), "", "");
        if (suffix.empty()) continue;
        auto it = latest.find(p);
        const bool newer = it == latest.end() || !(sn.time.sec < it->second.sec ||
                                                   (sn.time.sec == it->second.sec &&
                                                    sn.time.nsec < it->second.nsec));
        if (newer) {
          Mount(CleanPath(p + "/latest"), static_cast<int>(i), name, "");
          latest[p] = sn.time;
        }
      }
    }
  }
}

const MetaEntry* SnapshotDirs::Find(const std::string& path) const {
  auto it = entries_.find(path);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace haven::mount
