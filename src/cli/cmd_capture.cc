// `haven capture [--profile F] [--dry-run] [--verify-content]`: the environment capture
// (capture/capture.h). Blocked by a secret: nothing is stored, the first line names the
// lexically first offending file, every finding follows, exit 4.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "backend/cache_backend.h"
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

struct CaptureCmd {
  std::string profile_file;
  bool dry_run = false, verify_content = false, skip_if_unchanged = false;
  std::string host;
};

// Stable bytes: no times, no ids; the same tree gives the same report.
void PrintBlocked(const capture::CaptureResult& r) {
  if (Globals().json) {
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
}

void PrintSummaryJson(const CaptureCmd& o, const capture::CaptureResult& r,
                      const capture::Profile& profile, double secs) {
  const BackupResult& b = *r.backup;
  std::string pk = "[";
  for (size_t i = 0; i < r.package_files.size(); ++i)
    pk += (i ? "," : "") + JsonString(r.package_files[i]);
  pk += "]";
  for (const auto& f : r.findings) std::printf("%s\n", f.Json().c_str());
  std::printf(
      "{\"message_type\":\"summary\",\"snapshot_id\":\"%s\",\"tree\":\"%s\",\"home_tree\":\"%s\","
      "\"parent\":\"%s\",\"parent_trusted\":%s,\"scan_tag\":%s,\"files\":%llu,"
      "\"files_scanned\":%llu,\"files_verified\":%llu,\"files_read\":%llu,"
      "\"findings\":%zu,\"packages\":%s,\"dry_run\":%s,\"skipped\":%s,"
      "\"state_used\":%s,\"dirs_reused\":%llu,\"total_duration\":%.6f}\n",
      o.dry_run || b.skipped ? "" : b.snapshot_id.Hex().c_str(), b.tree.Hex().c_str(),
      r.home_tree ? r.home_tree->Hex().c_str() : "",
      r.parent ? r.parent->Hex().c_str() : "", r.parent_trusted ? "true" : "false",
      JsonString(capture::ScanTag(profile)).c_str(), (unsigned long long)r.files,
      (unsigned long long)r.files_scanned, (unsigned long long)r.files_verified,
      (unsigned long long)r.files_read, r.findings.size(), pk.c_str(),
      o.dry_run ? "true" : "false", b.skipped ? "true" : "false",
      r.state_used ? "true" : "false", (unsigned long long)r.dirs_reused, secs);
}

void PrintSummaryText(const CaptureCmd& o, const capture::CaptureResult& r,
                      uint64_t data_added) {
  const BackupResult& b = *r.backup;
  if (r.parent)
    Print(r.parent_trusted ? "using parent capture " + r.parent->Short()
                           : "parent capture " + r.parent->Short() +
                                 " has another scan version: every file is read and scanned");
  char line[256];
  std::snprintf(line, sizeof(line),
                "Files:    %llu tracked, %llu scanned, %llu reused without reading%s",
                (unsigned long long)r.files, (unsigned long long)r.files_scanned,
                (unsigned long long)(r.files - r.files_scanned),
                o.verify_content ? (", " + std::to_string(r.files_verified) + " verified").c_str()
                                 : "");
  Print(line);
  std::string pk;
  for (const auto& p : r.package_files) pk += " " + p;
  Print("Packages:" + (pk.empty() ? std::string(" none") : pk));
  Print((o.dry_run ? "Would add to the repository: " : "Added to the repository: ") +
        FormatBytes(data_added));
  if (b.skipped && !o.dry_run) {
    Print("skipped creating snapshot: the tree is the parent capture's");
  } else if (!o.dry_run) {
    Print("snapshot " + b.snapshot_id.Short() + " saved");
  }
  if (!r.findings.empty()) {
    Warn("warning: secrets stored (secrets.mode = \"warn\"):");
    for (const auto& f : r.findings) Warn(f.Text());
  }
}

// The profile (its repository is the default one) and the capture's options.
capture::CaptureOptions OptionsFor(const CaptureCmd& o, std::vector<std::string>& warnings) {
  const std::string home = HomeDir();
  capture::CaptureOptions opts;
  opts.profile = capture::Profile::Load(
      o.profile_file.empty() ? capture::DefaultProfilePath(home) : o.profile_file, home);
  if (Globals().repo.empty() && Globals().repository_file.empty() &&
      !opts.profile.repository.empty())
    Globals().repo = opts.profile.repository;
  opts.home = home;
  opts.host = o.host;
  opts.jobs = Jobs();
  opts.verify_content = o.verify_content;
  opts.skip_if_unchanged = o.skip_if_unchanged;
  opts.program_version = std::string("haven ") + kVersion;
  opts.warn = [&warnings](const std::string& w) { warnings.push_back(w); };
  return opts;
}

void RunCaptureCmd(const CaptureCmd& o) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> warnings;
  capture::CaptureOptions opts = OptionsFor(o, warnings);
  capture::Scanner scanner(ScannerCacheDir());

  OpenOptions open;
  open.dry_run = o.dry_run;  // every write but the lock's is discarded
  auto repo = OpenRepository(open);
  // The capture's state lives beside the repository's cache (none with --no-cache, and
  // none for a dry run, whose trees are never stored).
  if (!o.dry_run && repo->cache() && !repo->cache()->RepoDir().empty())
    opts.state_dir = repo->cache()->RepoDir() + "/capture";
  auto lock = LockRepository(*repo, false);
  // (the capture reads the index while its planning walk runs)
  auto indexed = IndexedRepository::Load(*repo, IndexLoad::kOnFirstUse);
  WriteSession session(*indexed, GlobalWriteOptions());
  capture::CaptureResult r = capture::RunCapture(session, scanner, opts);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Timings::PrintIfEnabled("capture", secs);
  // Warnings follow the report, so a blocked capture's first line names the file.
  struct PrintWarnings {
    std::vector<std::string>& w;
    ~PrintWarnings() {
      for (const auto& x : w) Warn("warning: " + x);
    }
  } print_warnings{warnings};

  if (r.blocked) {
    PrintBlocked(r);
    g_exit_code = ExitCodeFor(ErrorCode::kSecretsFound);
    return;
  }
  if (Globals().json) {
    PrintSummaryJson(o, r, opts.profile, secs);
  } else {
    PrintSummaryText(o, r, session.stats().data_added.load());
  }
  if (!r.findings.empty()) {
    g_exit_code = ExitCodeFor(ErrorCode::kSecretsFound);
  } else if (r.backup->incomplete) {
    Warn("Warning: at least one tracked file could not be read");
    g_exit_code = 3;
  }
}

}  // namespace

void RegisterCapture(CLI::App& app) {
  static CaptureCmd o;
  auto* cmd = app.add_subcommand("capture", "snapshot the tracked dotfiles and package lists");
  cmd->add_option("--profile", o.profile_file,
                  "capture profile (default ~/.config/haven/capture.toml)");
  cmd->add_flag("-n,--dry-run", o.dry_run, "do everything but write to the repository");
  cmd->add_flag("--verify-content", o.verify_content,
                "re-read unchanged files and compare their content ids with the parent");
  cmd->add_flag("--skip-if-unchanged", o.skip_if_unchanged,
                "write no snapshot when the tree equals the parent capture's");
  cmd->add_option("-H,--host", o.host, "host name recorded in the snapshot");
  cmd->callback([] { RunCaptureCmd(o); });
}

}  // namespace haven::cli
