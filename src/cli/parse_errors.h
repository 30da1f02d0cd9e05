// What haven prints for a command line it cannot parse. An unknown command or flag is
// reported in restic's words (`unknown command "diff" for "haven"`, `unknown flag: --exlude`)
// with the way forward: close command names, restic for a restic command haven does not have
// yet (it runs on the same repository), and the help of the command concerned. Every other
// parse error keeps CLI11's message.
#pragma once

#include <CLI/CLI.hpp>

namespace haven::cli {

// Prints the report for `e`, raised while parsing the command line into `app`, on stderr
// and returns the exit code (1, as restic).
int ReportParseError(CLI::App& app, const CLI::ParseError& e);

}  // namespace haven::cli
