#include "cli/parse_errors.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/common.h"

namespace haven::cli {

namespace {

// restic commands that haven does not have (yet): since mount, migrate and recover came
// (issue 14), every restic 0.14 command is haven's; these are restic 0.17's. `repository`:
// the command works on a repository, so restic can run it on haven's (the format is the same).
struct ResticOnlyCommand {
  std::string_view name;
  bool repository;
};
constexpr ResticOnlyCommand kResticOnly[] = {
    {"features", false},
    {"options", false},
};

// The innermost command that was recognised ("haven key add" -> add).
CLI::App* InnermostCommand(CLI::App* app) {
  for (CLI::App* sub : app->get_subcommands())
    if (!sub->get_name().empty()) return InnermostCommand(sub);
  return app;
}

std::string CommandPath(const CLI::App* app) {
  std::string path = app->get_name();
  for (const CLI::App* p = app->get_parent(); p; p = p->get_parent())
    path = p->get_name() + " " + path;
  return path;
}

// The visible sub-commands of `app` (hidden ones have an empty group).
std::vector<std::string> CommandNames(CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands({}))
    if (!sub->get_name().empty() && !sub->get_group().empty()) names.push_back(sub->get_name());
  return names;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Quoted for a POSIX shell when it holds anything but plain path characters.
std::string ShellWord(const std::string& s) {
  constexpr std::string_view kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._:@%+=,-";
  if (!s.empty() && s.find_first_not_of(kPlain) == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void ReportUnknownCommand(CLI::App* at, const std::string& word) {
  std::cerr << "unknown command \"" << word << "\" for \"" << CommandPath(at) << "\"\n";
  std::vector<std::string> close;
  for (const std::string& name : CommandNames(at))
    if (EditDistance(word, name) <= 2 || (!word.empty() && name.starts_with(word)))
      close.push_back(name);
  if (!close.empty()) {
    std::cerr << "\nDid you mean this?\n";
    for (const std::string& name : close) std::cerr << '\t' << name << '\n';
  }
  if (at->get_parent() == nullptr) {
    auto it = std::find_if(std::begin(kResticOnly), std::end(kResticOnly),
                           [&](const ResticOnlyCommand& c) { return c.name == word; });
    if (it != std::end(kResticOnly)) {
      if (it->repository) {
        std::string repo = "REPO";
        try {
          repo = ShellWord(RepoLocation());
        } catch (...) {
        }
        std::cerr << "\nhaven has no \"" << word
                  << "\" command yet; restic can run it on the same repository:\n  restic -r "
                  << repo << ' ' << word << " ...\n";
      } else {
        std::cerr << "\nhaven has no \"" << word << "\" command yet; restic has one:\n  restic "
                  << word << " ...\n";
      }
    }
  }
  std::cerr << "\nRun '" << CommandPath(at) << " --help' for usage.\n";
}

void ReportUnknownFlag(CLI::App* at, const std::string& arg) {
  if (arg.starts_with("--"))
    std::cerr << "unknown flag: " << arg.substr(0, arg.find('=')) << '\n';
  else
    std::cerr << "unknown shorthand flag: '" << arg[1] << "' in " << arg << '\n';
  std::cerr << "Run '" << CommandPath(at) << " --help' for usage.\n";
}

}  // namespace

int ReportParseError(CLI::App& app, const CLI::ParseError& e) {
  CLI::App* at = InnermostCommand(&app);
  // What CLI11 could not place: unknown flags, and words where a command was expected.
  std::vector<std::string> left = app.remaining(true);
  if (!CommandNames(at).empty()) {
    for (const std::string& w : left)
      if (!w.starts_with("-")) {
        ReportUnknownCommand(at, w);
        return 1;
      }
  }
  for (const std::string& w : left)
    if (w.size() > 1 && w.starts_with("-") && w != "--") {
      ReportUnknownFlag(at, w);
      return 1;
    }
  app.exit(e);
  return 1;
}

}  // namespace haven::cli
