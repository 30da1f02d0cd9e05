#include "capture/profile.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "core/error.h"

namespace haven::capture {

namespace {

std::string ExpandHome(const std::string& p, const std::string& home) {
  if (p == "~") return home;
  if (p.starts_with("~/")) return home + p.substr(1);
  return p;
}

[[noreturn]] void Bad(const std::string& name, const toml::source_region& where,
                      const std::string& msg) {
  Fail(ErrorCode::kInvalidArgument, "profile " + name + ":" + std::to_string(where.begin.line) +
                                        ":" + std::to_string(where.begin.column) + ": " + msg);
}

void CheckKeys(const toml::table& t, const std::set<std::string>& allowed,
               const std::string& name, const std::string& where) {
  for (const auto& [k, v] : t)
    if (!allowed.count(std::string(k.str())))
      Bad(name, v.source(), "unknown key " + where + std::string(k.str()));
}

std::vector<std::string> Strings(const toml::table& t, const char* key, const std::string& name,
                                 const std::string& home) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) Bad(name, n->source(), std::string(key) + " must be an array of strings");
  for (const toml::node& e : *a) {
    auto s = e.value<std::string>();
    if (!s) Bad(name, e.source(), std::string(key) + " must hold only strings");
    if (s->empty()) Bad(name, e.source(), std::string(key) + " holds an empty string");
    out.push_back(ExpandHome(*s, home));
  }
  return out;
}

const toml::table* Section(const toml::table& root, const char* key, const std::string& name) {
  const toml::node* n = root.get(key);
  if (!n) return nullptr;
  if (!n->as_table()) Bad(name, n->source(), std::string(key) + " must be a table");
  return n->as_table();
}

}  // namespace

Profile Profile::Parse(std::string_view text, const std::string& home, const std::string& name) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    Bad(name, e.source(), std::string(e.description()));
  }
  Profile p;
  p.text = std::string(text);
  p.name = name;
  CheckKeys(root, {"repository", "track", "secrets", "packages"}, name, "");
  if (const toml::node* r = root.get("repository")) {
    auto s = r->value<std::string>();
    if (!s) Bad(name, r->source(), "repository must be a string");
    p.repository = ExpandHome(*s, home);
  }
  if (const toml::table* t = Section(root, "track", name)) {
    CheckKeys(*t, {"paths", "exclude"}, name, "track.");
    p.track = Strings(*t, "paths", name, home);
    p.exclude = Strings(*t, "exclude", name, home);
  }
  if (const toml::table* t = Section(root, "secrets", name)) {
    CheckKeys(*t, {"mode", "allow_paths", "allow_rules", "allow_fingerprints"}, name, "secrets.");
    if (const toml::node* m = t->get("mode")) {
      auto s = m->value<std::string>();
      if (s && *s == "block") {
        p.mode = SecretMode::kBlock;
      } else if (s && *s == "warn") {
        p.mode = SecretMode::kWarn;
      } else {
        Bad(name, m->source(), "secrets.mode must be \"block\" or \"warn\"");
      }
    }
    p.allow.path_globs = Strings(*t, "allow_paths", name, home);
    p.allow.rules = Strings(*t, "allow_rules", name, "");
    p.allow.fingerprints = Strings(*t, "allow_fingerprints", name, "");
  }
  if (const toml::table* t = Section(root, "packages", name)) {
    CheckKeys(*t, {"managers", "timeout"}, name, "packages.");
    if (t->get("managers")) p.managers = Strings(*t, "managers", name, "");
    if (const toml::node* n = t->get("timeout")) {
      auto v = n->value<int64_t>();
      if (!v || *v < 1 || *v > 3600) Bad(name, n->source(), "packages.timeout must be 1..3600 seconds");
      p.package_timeout_s = static_cast<int>(*v);
    }
  }
  return p;
}

Profile Profile::Load(const std::string& file, const std::string& home) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    Fail(ErrorCode::kInvalidArgument,
         "cannot read capture profile " + file + " (create it or pass --profile)");
  std::ostringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), home, file);
}

std::string DefaultProfilePath(const std::string& home) {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/haven/capture.toml";
  return home + "/.config/haven/capture.toml";
}

std::vector<std::string> ExpandTracked(const std::vector<std::string>& patterns,
                                       std::vector<std::string>* warnings) {
  std::vector<std::string> out;
  for (const std::string& pat : patterns) {
    if (pat.find_first_of("*?[") == std::string::npos) {
      struct stat st;
      if (lstat(pat.c_str(), &st) != 0) {
        if (warnings) warnings->push_back("tracked path " + pat + " does not exist");
        continue;
      }
      out.push_back(pat);
      continue;
    }
    glob_t g{};
    if (glob(pat.c_str(), GLOB_NOSORT, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    globfree(&g);
  }
  for (std::string& p : out)
    while (p.size() > 1 && p.back() == '/') p.pop_back();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  // Drop paths below another tracked path (the archiver would store them twice).
  std::vector<std::string> kept;
  for (const std::string& p : out) {
    if (!kept.empty() && (kept.back() == "/" || p.starts_with(kept.back() + "/"))) continue;
    kept.push_back(p);
  }
  return kept;
}

}  // namespace haven::capture
