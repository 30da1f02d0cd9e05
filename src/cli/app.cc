// The haven command line: global options and the command table. Each command lives in
// its own cmd_*.cc and only wires options to the library.
#include <malloc.h>

#include <csignal>
#include <iostream>

#include "cli/common.h"
#include "cli/more_commands.h"
#include "cli/mount_commands.h"
#include "cli/parse_errors.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "repo/gojson.h"

namespace haven::cli {

namespace {
// Every option that takes a value takes exactly one per occurrence, as restic's do:
// `--exclude '*.o' /b` leaves /b a path; repeat the option for more values. (CLI11 lets a
// vector option swallow every argument up to the next option by default.)
void OneValuePerOption(CLI::App& app) {
  for (CLI::Option* opt : app.get_options())
    if (!opt->get_positional()) opt->allow_extra_args(false);
  for (CLI::App* sub : app.get_subcommands({})) OneValuePerOption(*sub);
}
}  // namespace

int Run(CLI::App& app, int argc, char** argv);
int ReportFatal(const std::string& message, int code);

int Main(int argc, char** argv) {
  // A fixed mmap threshold: glibc's dynamic one grows after the first large free, and then
  // every large transient buffer (decoded index files, parser tapes, packs) stays resident
  // in the heap after it is freed (prune --dry-run held 4x its index that way).
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  // Ctrl-C, SIGTERM, SIGHUP: remove our lock and temp files, exit 130 (as restic).
  interrupt::Install();
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"haven: encrypted, deduplicated snapshots in restic's repository format"};
  app.name("haven");
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions& g = Globals();
  app.add_option("-r,--repo", g.repo, "repository location (env HAVEN_REPOSITORY)");
  app.add_option("--repository-file", g.repository_file,
                 "file whose first line is the repository location (env HAVEN_REPOSITORY_FILE)");
  app.add_option("-p,--password-file", g.password_file,
                 "file holding the repository password (env HAVEN_PASSWORD_FILE)");
  app.add_option("--password-command", g.password_command,
                 "command that prints the password (env HAVEN_PASSWORD_COMMAND)");
  app.add_flag("--json", g.json, "machine-readable output");
  app.add_flag("-q,--quiet", g.quiet, "print nothing but errors");
  app.add_flag("-v,--verbose", g.verbose, "more output (repeatable)");
  app.add_option("--jobs", g.jobs, "worker threads: auto (all cores) or N");
  app.add_option("--cache-dir", g.cache_dir, "local cache directory (env HAVEN_CACHE_DIR)");
  app.add_flag("--no-cache", g.no_cache, "do not use a local cache");
  app.add_flag("--no-lock", g.no_lock, "do not lock the repository (read-only commands)");
  app.add_option("--compression", g.compression, "auto, off, max, fastest, better");
  app.add_option("--key-hint", g.key_hint,
                 "key id (or prefix) to try first (env HAVEN_KEY_HINT, RESTIC_KEY_HINT)");
  app.add_option("-o,--option", g.options, "set a backend option (backend.key=value, repeatable)");
  app.add_option("--pack-size", g.pack_size,
                 "target size of new packs in MiB, 4..128 (env HAVEN_PACK_SIZE, RESTIC_PACK_SIZE)");
  app.add_option("--limit-upload", g.limit_upload, "limit uploads to this many KiB/s (0: none)");
  app.add_option("--limit-download", g.limit_download,
                 "limit downloads to this many KiB/s (0: none)");
  app.add_option("--cacert", g.cacert, "file with a TLS root certificate (repeatable)");
  app.add_option("--tls-client-cert", g.tls_client_cert, "file with a TLS client certificate and key");
  app.add_flag("--insecure-tls", g.insecure_tls, "skip TLS certificate verification (dangerous)");
  app.add_flag("--cleanup-cache", g.cleanup_cache,
               "remove cache folders of repositories not used for 30 days");

  RegisterInit(app);
  RegisterBackup(app);
  RegisterSnapshots(app);
  RegisterLs(app);
  RegisterRestore(app);
  RegisterDump(app);
  RegisterCat(app);
  RegisterCheck(app);
  RegisterKey(app);
  RegisterUnlock(app);
  RegisterForget(app);
  RegisterPrune(app);
  RegisterRepair(app);
  RegisterVersion(app);
  RegisterDebug(app);
  RegisterScan(app);
  RegisterCapture(app);
  RegisterApply(app);
  RegisterPackages(app);
  RegisterGenerate(app);
  RegisterDiff(app);
  RegisterFind(app);
  RegisterStats(app);
  RegisterTag(app);
  RegisterList(app);
  RegisterCache(app);
  RegisterSelfUpdate(app);
  RegisterRewrite(app);
  RegisterCopy(app);
  RegisterBox(app);
  RegisterMount(app);
  RegisterMigrate(app);
  RegisterRecover(app);

  OneValuePerOption(app);

  int rc = Run(app, argc, argv);
  // A command interrupted just before its end (the signal thread had no time yet) does not
  // report success: the cleanups run and the exit code is 130.
  interrupt::ExitIfInterrupted();
  return rc;
}

int Run(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e);
  } catch (const Error& e) {
    return ReportFatal(e.what(), ExitCodeFor(e.code()));
  } catch (const std::exception& e) {
    return ReportFatal(e.what(), 1);
  }
  return g_exit_code;
}

// "Fatal: ..." on stderr; with --json restic 0.17's {"message_type":"exit_error"} line
// instead, so a script reading stderr as JSON lines can parse every line.
int ReportFatal(const std::string& message, int code) {
  if (Globals().json) {
    std::string j = "{\"message_type\":\"exit_error\",\"code\":" + std::to_string(code) +
                    ",\"message\":";
    gojson::AppendString(j, message);
    std::cerr << j << "}\n";
  } else {
    std::cerr << "Fatal: " << message << '\n';
  }
  return code;
}

}  // namespace haven::cli
