// Documentation generated from the CLI11 command definitions (the same ones --help prints,
// so they cannot drift): man pages in roff (man(7)) and bash, zsh and fish completion
// scripts. Hidden commands and options (empty group) are left out.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

namespace haven::cli {

// One man page per command: {"haven.1", text}, {"haven-backup.1", text}, and for nested
// commands {"haven-key-add.1", text}. `version` goes into the page footer.
std::vector<std::pair<std::string, std::string>> ManPages(const CLI::App& root,
                                                          const std::string& version);

std::string BashCompletion(const CLI::App& root);
std::string ZshCompletion(const CLI::App& root);
std::string FishCompletion(const CLI::App& root);

}  // namespace haven::cli
