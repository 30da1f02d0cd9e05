// Where an SFTP repository is and which command reaches it, parsed as restic 0.14 parses
// them (docs/backends.md, SFTP):
//
//   sftp:[user@]HOST:PATH            PATH as given: relative to the login folder unless it
//                                    starts with '/'
//   sftp://[user@]HOST[:PORT]/PATH   PATH relative; sftp://HOST//abs for an absolute one
//
// The command is `ssh HOST [-p PORT] [-l USER] [ARGS...] -s sftp`, or the whole of
// `-o sftp.command=...` (then HOST and PATH's host part are not used for the connection).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace haven {

struct SftpLocation {
  std::string user, host, port;
  std::string path;     // cleaned ("." for the login folder)
  std::string display;  // for messages, without any password
};

// Throws kInvalidArgument for a malformed location (no host or path, a path starting
// with '~', which sftp servers do not expand).
SftpLocation ParseSftpLocation(std::string_view location);

// Splits a command line into words: blanks separate, '...' and "..." group (the quotes
// are removed), a backslash outside single quotes takes the next character literally.
// Throws kInvalidArgument for an unterminated quote or an empty command.
std::vector<std::string> SplitShellWords(std::string_view s);

// The argv to start: `command` split when given, else ssh with `args` split in.
std::vector<std::string> SftpCommand(const SftpLocation& loc, const std::string& command,
                                     const std::string& args);

// path.Clean of Go: no empty or "." components, ".." resolved where possible, "." for "".
std::string CleanSftpPath(std::string_view path);

}  // namespace haven
