// `haven capture [--profile F] [--dry-run] [--verify-content]`: the environment capture
// (capture/capture.h). Blocked by a secret: nothing is stored, the first line names the
// lexically first offending file, every finding follows, exit 4.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "capture/capture.h"
#include "cli/common.h"
#include "core/error.h"
#include "core/timings.h"

namespace haven::cli {

namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\u%04x", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

void RegisterCapture(CLI::App& app) {
  static std::string profile_file;
  static bool dry_run = false, verify_content = false;
  static std::string host;
  auto* cmd = app.add_subcommand("capture", "snapshot the tracked dotfiles and package lists");
  cmd->add_option("--profile", profile_file, "capture profile (default ~/.config/haven/capture.toml)");
  cmd->add_flag("-n,--dry-run", dry_run, "do everything but write to the repository");
  cmd->add_flag("--verify-content", verify_content,
                "re-read unchanged files and compare their content ids with the parent");
  cmd->add_option("-H,--host", host, "host name recorded in the snapshot");
  cmd->callback([] {
    auto start = std::chrono::steady_clock::now();
    const std::string home = HomeDir();
    capture::CaptureOptions opts;
    opts.profile = capture::Profile::Load(
        profile_file.empty() ? capture::DefaultProfilePath(home) : profile_file, home);
    if (Globals().repo.empty() && Globals().repository_file.empty() &&
        !opts.profile.repository.empty())
      Globals().repo = opts.profile.repository;
    opts.home = home;
    opts.host = host;
    opts.jobs = Jobs();
    opts.verify_content = verify_content;
    opts.program_version = std::string("haven ") + kVersion;
    std::vector<std::string> warnings;
    opts.warn = [&](const std::string& w) { warnings.push_back(w); };
    capture::Scanner scanner(ScannerCacheDir());

    OpenOptions open;
    open.dry_run = dry_run;
    auto repo = OpenRepository(open);
    auto lock = LockRepository(*repo, false);
    auto indexed = IndexedRepository::Load(*repo);
    WriteSession session(*indexed, GlobalWriteOptions());
    capture::CaptureResult r = capture::RunCapture(session, scanner, opts);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Timings::PrintIfEnabled("capture", secs);
    const bool json = Globals().json;
    // Warnings follow the report, so a blocked capture's first line names the file.
    struct PrintWarnings {
      std::vector<std::string>& w;
      ~PrintWarnings() {
        for (const auto& x : w) Warn("warning: " + x);
      }
    } print_warnings{warnings};

    if (r.blocked) {
      // Stable bytes: no times, no ids; the same tree gives the same report.
      if (json) {
        for (const auto& f : r.findings) std::printf("%s\n", f.Json().c_str());
        std::printf("{\"message_type\":\"blocked\",\"first_path\":%s,\"findings\":%zu}\n",
                    JsonString(r.findings.front().path).c_str(), r.findings.size());
        std::fflush(stdout);
      } else {
        Warn("capture blocked: secret found in " +
             capture::SanitizeForTerminal(r.findings.front().path));
        for (const auto& f : r.findings) Warn(f.Text());
        Warn("nothing was stored (allow a finding in the profile's [secrets] or add haven:allow "
             "to its line)");
      }
      g_exit_code = ExitCodeFor(ErrorCode::kSecretsFound);
      return;
    }
    const BackupResult& b = *r.backup;
    if (json) {
      std::string pk = "[";
      for (size_t i = 0; i < r.package_files.size(); ++i)
        pk += (i ? "," : "") + JsonString(r.package_files[i]);
      pk += "]";
      for (const auto& f : r.findings) std::printf("%s\n", f.Json().c_str());
      std::printf(
          "{\"message_type\":\"summary\",\"snapshot_id\":\"%s\",\"tree\":\"%s\",\"home_tree\":\"%s\","
          "\"parent\":\"%s\",\"parent_trusted\":%s,\"scan_tag\":%s,\"files\":%llu,"
          "\"files_scanned\":%llu,\"files_verified\":%llu,\"files_read\":%llu,"
          "\"findings\":%zu,\"packages\":%s,\"dry_run\":%s,\"total_duration\":%.6f}\n",
          dry_run ? "" : b.snapshot_id.Hex().c_str(), b.tree.Hex().c_str(),
          r.home_tree ? r.home_tree->Hex().c_str() : "",
          r.parent ? r.parent->Hex().c_str() : "", r.parent_trusted ? "true" : "false",
          JsonString(capture::ScanTag(opts.profile)).c_str(), (unsigned long long)r.files,
          (unsigned long long)r.files_scanned, (unsigned long long)r.files_verified,
          (unsigned long long)r.files_read, r.findings.size(), pk.c_str(),
          dry_run ? "true" : "false", secs);
    } else {
      if (r.parent)
        Print(r.parent_trusted
                  ? "using parent capture " + r.parent->Short()
                  : "parent capture " + r.parent->Short() +
                        " has another scan version: every file is read and scanned");
      char line[256];
      std::snprintf(line, sizeof(line),
                    "Files:    %llu tracked, %llu scanned, %llu reused without reading%s",
                    (unsigned long long)r.files, (unsigned long long)r.files_scanned,
                    (unsigned long long)(r.files - r.files_scanned),
                    verify_content
                        ? (", " + std::to_string(r.files_verified) + " verified").c_str()
                        : "");
      Print(line);
      std::string pk;
      for (const auto& p : r.package_files) pk += " " + p;
      Print("Packages:" + (pk.empty() ? std::string(" none") : pk));
      Print((dry_run ? "Would add to the repository: " : "Added to the repository: ") +
            FormatBytes(session.stats().data_added.load()));
      if (!dry_run) Print("snapshot " + b.snapshot_id.Short() + " saved");
      if (!r.findings.empty()) {
        Warn("warning: secrets stored (secrets.mode = \"warn\"):");
        for (const auto& f : r.findings) Warn(f.Text());
      }
    }
    if (!r.findings.empty()) {
      g_exit_code = ExitCodeFor(ErrorCode::kSecretsFound);
    } else if (b.incomplete) {
      Warn("Warning: at least one tracked file could not be read");
      g_exit_code = 3;
    }
  });
}

}  // namespace haven::cli
