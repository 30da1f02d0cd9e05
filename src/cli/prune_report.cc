#include "cli/prune_report.h"

#include <cstdio>

#include "cli/common.h"

namespace haven::cli {

namespace {

std::string Percent(uint64_t num, uint64_t den) {
  if (den == 0) return "";
  double p = 100.0 * double(num) / double(den);
  if (p > 100) p = 100;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%3.2f%%", p);
  return buf;
}

std::string Line(const char* label, int width, uint64_t n, const std::string& tail) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%-*s%10llu%s%s", width, label,
                static_cast<unsigned long long>(n), tail.empty() ? "" : " ", tail.c_str());
  return buf;
}

std::string BlobLine(const char* label, uint64_t n, uint64_t size) {
  return Line(label, 14, n, "blobs / " + FormatBytes(size));
}

// restic 0.14's printPruneStats: Verbosef lines at the default verbosity, Verboseff with -v.
void PrintStats(const PruneStats& s) {
  Verbose("");
  Verbose(BlobLine("used:", s.blobs.used, s.size.used));
  if (s.blobs.duplicate > 0) Verbose(BlobLine("duplicates:", s.blobs.duplicate, s.size.duplicate));
  Verbose(BlobLine("unused:", s.blobs.unused, s.size.unused));
  if (s.size.unref > 0) Verbose("unreferenced:                    " + FormatBytes(s.size.unref));
  uint64_t total_blobs = s.blobs.used + s.blobs.unused + s.blobs.duplicate;
  uint64_t total_size = s.size.used + s.size.duplicate + s.size.unused + s.size.unref;
  uint64_t unused_size = s.size.duplicate + s.size.unused;
  Verbose(BlobLine("total:", total_blobs, total_size));
  Verbose("unused size: " + Percent(unused_size, total_size) + " of total size");

  Print("");
  Print(BlobLine("to repack:", s.blobs.repack, s.size.repack));
  Print(BlobLine("this removes:", s.blobs.repackrm, s.size.repackrm));
  Print(BlobLine("to delete:", s.blobs.remove, s.size.remove + s.size.unref));
  uint64_t prune_size = s.size.remove + s.size.repackrm + s.size.unref;
  uint64_t prune_blobs = s.blobs.remove + s.blobs.repackrm;
  Print(BlobLine("total prune:", prune_blobs, prune_size));
  uint64_t remaining = total_size > prune_size ? total_size - prune_size : 0;
  Print(BlobLine("remaining:", total_blobs > prune_blobs ? total_blobs - prune_blobs : 0,
                 remaining));
  uint64_t gone = s.size.remove + s.size.repackrm;
  uint64_t unused_after = unused_size > gone ? unused_size - gone : 0;
  Print("unused size after prune: " + FormatBytes(unused_after) + " (" +
        Percent(unused_after, remaining) + " of remaining size)");
  Print("");
  Verbose(Line("totally used packs:", 20, s.packs.used, ""));
  Verbose(Line("partly used packs:", 20, s.packs.partly_used, ""));
  Verbose(Line("unused packs:", 20, s.packs.unused, ""));
  Verbose("");
  Verbose(Line("to keep:", 14, s.packs.keep, "packs"));
  Verbose(Line("to repack:", 14, s.packs.repack, "packs"));
  Verbose(Line("to delete:", 14, s.packs.remove, "packs"));
  if (s.packs.unref > 0) Verbose(Line("to delete:", 14, s.packs.unref, "unreferenced packs"));
}

void PrintIds(const std::string& title, const std::vector<PackId>& ids) {
  Print(title);
  for (const PackId& id : ids) Print("  " + id.Hex());
  Print("");
}

}  // namespace

void PrintPrunePlan(const PrunePlan& plan, bool dry_run) {
  PrintStats(plan.stats);
  if (dry_run && Globals().verbose >= 2) {
    if (!plan.remove_first.empty())
      PrintIds("Would have removed the following unreferenced packs:", plan.remove_first);
    PrintIds("Would have repacked and removed the following packs:", plan.repack);
    PrintIds("Would have removed the following no longer used packs:", plan.remove);
  }
}

}  // namespace haven::cli
