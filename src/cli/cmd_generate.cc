// generate: man pages and shell completions from the command definitions (cli_docs), as
// restic's `generate`: --man DIR, --bash-completion FILE, --zsh-completion FILE,
// --fish-completion FILE ("-" writes a completion to stdout).
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/cli_docs.h"
#include "cli/common.h"
#include "core/error.h"

namespace haven::cli {

namespace {

struct GenerateOptions {
  std::string man_dir, bash_file, zsh_file, fish_file;
};

void WriteTextFile(const std::string& path, const std::string& text, const char* what) {
  if (path == "-") {
    std::cout << text;
    return;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f)
      Fail(ErrorCode::kIo, std::string("cannot write the ") + what + " file " + path + ": " +
                               std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    Fail(ErrorCode::kIo, std::string("cannot write the ") + what + " file " + path + ": " +
                             std::strerror(errno));
}

void RunGenerate(const CLI::App& root, const GenerateOptions& o) {
  if (o.man_dir.empty() && o.bash_file.empty() && o.zsh_file.empty() && o.fish_file.empty())
    Fail(ErrorCode::kInvalidArgument,
         "nothing to do, please specify at least one output file/dir (--man, "
         "--bash-completion, --zsh-completion, --fish-completion)");
  if (!o.man_dir.empty()) {
    if (mkdir(o.man_dir.c_str(), 0755) != 0 && errno != EEXIST)
      Fail(ErrorCode::kIo, "cannot create the man page directory " + o.man_dir + ": " +
                               std::strerror(errno));
    Verbose("writing man pages to directory " + o.man_dir);
    for (const auto& [name, text] : ManPages(root, kVersion))
      WriteTextFile(o.man_dir + "/" + name, text, "man page");
  }
  if (!o.bash_file.empty()) {
    Verbose("writing bash completion file to " + o.bash_file);
    WriteTextFile(o.bash_file, BashCompletion(root), "bash completion");
  }
  if (!o.fish_file.empty()) {
    Verbose("writing fish completion file to " + o.fish_file);
    WriteTextFile(o.fish_file, FishCompletion(root), "fish completion");
  }
  if (!o.zsh_file.empty()) {
    Verbose("writing zsh completion file to " + o.zsh_file);
    WriteTextFile(o.zsh_file, ZshCompletion(root), "zsh completion");
  }
}

}  // namespace

void RegisterGenerate(CLI::App& app) {
  static GenerateOptions o;
  static const CLI::App* root = &app;
  auto* cmd = app.add_subcommand(
      "generate", "generate manual pages and auto-completion files (bash, fish, zsh)");
  cmd->add_option("--man", o.man_dir, "write man pages to directory");
  cmd->add_option("--bash-completion", o.bash_file, "write bash completion file");
  cmd->add_option("--fish-completion", o.fish_file, "write fish completion file");
  cmd->add_option("--zsh-completion", o.zsh_file, "write zsh completion file");
  cmd->callback([] { RunGenerate(*root, o); });
}

}  // namespace haven::cli
