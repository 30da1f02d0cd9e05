#include <cstdio>
#include <optional>

#include "cli/common.h"
#include "core/error.h"
#include "repo/gojson.h"
#include "repo/key_file.h"

namespace haven::cli {

namespace {
struct InitOptions {
  int repository_version = 2;
  std::string scrypt = "32768,8,4";
  bool copy_chunker_params = false;
  std::string from_repo, from_repository_file, from_password_file, from_password_command,
      from_key_hint;
};

// init --copy-chunker-params: the chunker polynomial of the source repository (restic's
// --from-* flags and RESTIC_FROM_* variables), so that `copy` between the two
// deduplicates.
uint64_t SourcePolynomial(const InitOptions& o) {
  return OpenFromRepository({o.from_repo, o.from_repository_file, o.from_password_file,
                             o.from_password_command, o.from_key_hint},
                            " for --copy-chunker-params")
      ->config()
      .chunker_polynomial;
}

crypto::ScryptParams ParseScrypt(const std::string& s) {
  unsigned long long n = 0;
  unsigned r = 0, p = 0;
  if (std::sscanf(s.c_str(), "%llu,%u,%u", &n, &r, &p) != 3)
    Fail(ErrorCode::kInvalidArgument, "invalid --scrypt \"" + s + "\" (want N,r,p)");
  crypto::ScryptParams params{n, r, p};
  crypto::CheckScryptParams(params);
  return params;
}
}  // namespace

void RegisterInit(CLI::App& app) {
  static InitOptions o;
  auto* cmd = app.add_subcommand("init", "initialize a new repository");
  cmd->add_option("--repository-version", o.repository_version, "repository format: 1 or 2")
      ->default_val(2);
  cmd->add_option("--scrypt", o.scrypt,
                  "key derivation parameters N,r,p for the new key (default 32768,8,4)");
  cmd->add_flag("--copy-chunker-params", o.copy_chunker_params,
                "copy the chunker parameters from the source repository (for copy)");
  cmd->add_option("--from-repo", o.from_repo,
                  "source repository (env HAVEN_FROM_REPOSITORY, RESTIC_FROM_REPOSITORY)");
  cmd->add_option("--from-repository-file", o.from_repository_file,
                  "file with the source repository location (env *_FROM_REPOSITORY_FILE)");
  cmd->add_option("--from-password-file", o.from_password_file,
                  "file with the source repository's password (env *_FROM_PASSWORD_FILE)");
  cmd->add_option("--from-password-command", o.from_password_command,
                  "command printing the source repository's password (env *_FROM_PASSWORD_COMMAND)");
  cmd->add_option("--from-key-hint", o.from_key_hint,
                  "key of the source repository to try first (env *_FROM_KEY_HINT)");
  cmd->callback([] {
    std::string loc = RepoLocation();
    auto be = MakeBackend(loc);
    if (be->Exists())
      Fail(ErrorCode::kFatal, "create repository at " + be->Location() +
                                  " failed: config file already exists");
    const GlobalOptions& g = Globals();
    std::optional<uint64_t> polynomial;
    if (o.copy_chunker_params) polynomial = SourcePolynomial(o);
    std::string pw = ReadPassword("enter password for new repository: ", /*confirm=*/true);
    Repository::Init(*be, pw, o.repository_version, ParseScrypt(o.scrypt), Jobs(), polynomial);
    auto repo = Repository::Open(be, pw, Jobs());
    if (g.json) {
      std::string j = "{\"message_type\":\"initialized\",\"id\":\"" + repo->config().id +
                      "\",\"repository\":";
      gojson::AppendString(j, be->Location());  // without a password in the URL
      std::printf("%s}\n", j.c_str());
      return;
    }
    Print("created haven repository " + repo->config().id.substr(0, 10) + " at " + be->Location());
    Print("");
    Print("Please note that knowledge of your password is required to access\n"
          "the repository. Losing your password means that your data is\n"
          "irrecoverably lost.");
  });
}

}  // namespace haven::cli
