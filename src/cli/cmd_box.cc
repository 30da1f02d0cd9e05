// box: a single encrypted file (docs/box.md). `haven box VERB BOX ...`: create, add, list,
// extract, cat, rm, mv, log, export, import, compact. The box is opened with a password
// (the usual sources) or --key HEX (or $HAVEN_BOX_KEY): 64 hex digits, a random key.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/box_backend.h"
#include "backend/kill_backend.h"
#include "box/box.h"
#include "cli/common.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "repo/gojson.h"

namespace haven::cli {

namespace {

struct BoxArgs {
  std::string box, source, dest, path, from, to, dir, target, key;
  bool long_list = false, json = false, overwrite = false, no_permissions = false;
};

BoxArgs& Args() {
  static BoxArgs a;
  return a;
}

box::Secret SecretFor(bool create) {
  std::string key = Args().key;
  if (key.empty()) {
    if (const char* k = std::getenv("HAVEN_BOX_KEY"); k && *k) key = k;
  }
  if (!key.empty()) return box::KeySecret(key);
  box::Secret s;
  s.value = ReadPassword(create ? "enter password for new box: " : "enter password for box: ",
                         create);
  return s;
}

struct Storage {
  std::shared_ptr<BoxBackend> box;
  std::shared_ptr<Backend> outer;
};

// alone: the verb writes much (add, import) and holds the box alone when it can
// (BoxOptions::alone).
Storage MakeStorage(const std::string& path, bool alone = false) {
  std::string p = path.rfind("box:", 0) == 0 ? path.substr(4) : path;
  BoxOptions opts = BoxOptions::FromEnvironment();
  opts.alone = alone;
  Storage s;
  s.box = std::make_shared<BoxBackend>(p, opts);
  s.outer = s.box;
  // Debug hook for crash tests (docs/cli.md): SIGKILL after N saves/removes.
  if (const char* kill = std::getenv("HAVEN_DEBUG_KILL_AFTER_OPS"); kill && *kill)
    s.outer = std::make_shared<KillBackend>(s.outer, std::stoull(kill));
  return s;
}

std::unique_ptr<box::Box> OpenBox(bool alone = false) {
  Storage s = MakeStorage(Args().box, alone);
  return box::Box::Open(s.box, s.outer, SecretFor(false), Jobs());
}

void WriteOut(ByteView b) {
  size_t done = 0;
  while (done < b.size()) {
    ssize_t w = ::write(STDOUT_FILENO, b.data() + done, b.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) Fail(ErrorCode::kIo, std::string("write to stdout failed: ") + std::strerror(errno));
    done += static_cast<size_t>(w);
  }
}

void PrintChange(const std::string& what, const box::ChangeResult& r) {
  Print(what + " (snapshot " + r.snapshot.Short() + ", " + std::to_string(r.trees_written) +
        " trees rewritten)");
}

void RunList() {
  auto b = OpenBox();
  std::vector<box::Entry> entries = b->List(Args().path);
  if (Args().json || Globals().json) {
    std::string out = "[";
    for (size_t i = 0; i < entries.size(); ++i) {
      const box::Entry& e = entries[i];
      if (i) out += ',';
      out += "{\"path\":";
      gojson::AppendString(out, e.path);
      out += std::string(",\"type\":\"") + NodeTypeName(e.node.type) + "\",\"size\":" +
             std::to_string(e.node.size) + ",\"mode\":" + std::to_string(e.node.mode) +
             ",\"mtime\":";
      gojson::AppendString(out, gojson::FormatTime(e.node.mtime));
      out += '}';
    }
    std::printf("%s]\n", out.c_str());
    return;
  }
  for (const box::Entry& e : entries) {
    if (!Args().long_list) {
      std::printf("%s\n", e.path.c_str());
      continue;
    }
    std::printf("%s %12llu %s %s\n", GoModeString(e.node.mode).c_str(),
                static_cast<unsigned long long>(e.node.size),
                FormatTimeShort(e.node.mtime).c_str(), e.path.c_str());
  }
}

void RunExtract() {
  auto b = OpenBox();
  box::ExtractOptions o;
  o.target = Args().target;
  o.overwrite = Args().overwrite;
  o.no_permissions = Args().no_permissions;
  o.jobs = Jobs();
  o.warn = [](const std::string& w) { Warn(w); };
  o.note = [](const std::string& w) { Warn(w); };
  box::ExtractResult r = b->Extract(Args().path, o);
  Print("extracted " + std::to_string(r.restore.files) + " files, " +
        std::to_string(r.restore.dirs) + " directories, " + FormatBytes(r.restore.bytes) +
        (r.kept ? ", kept " + std::to_string(r.kept) + " existing (--overwrite replaces them)"
                : ""));
  if (r.restore.errors) {
    Warn("there were " + std::to_string(r.restore.errors) + " errors");
    g_exit_code = 1;
  }
}

void RunLog() {
  auto b = OpenBox();
  for (const box::LogEntry& e : b->Log()) {
    std::string paths;
    for (const std::string& p : e.snapshot.paths) paths += (paths.empty() ? "" : " -> ") + p;
    std::printf("%s  %s  %-6s %s\n", e.id.Short().c_str(),
                FormatTimeShort(e.snapshot.time).c_str(), e.action.c_str(), paths.c_str());
  }
}

void RunAdd() {
  auto b = OpenBox(/*alone=*/true);
  box::AddOptions o;
  o.jobs = Jobs();
  o.write = GlobalWriteOptions();
  o.warn = [](const std::string& w) { Warn(w); };
  box::ChangeResult r = b->Add(Args().source, Args().dest, o);
  PrintChange("added " + Args().source + ": " + std::to_string(r.stats.total_files) +
                  " files, " + FormatBytes(r.stats.total_bytes),
              r);
  if (r.incomplete) g_exit_code = 3;
  if (const char* t = std::getenv("HAVEN_IMPORT_TIMINGS"); t && *t && std::strcmp(t, "0") != 0)
    std::fprintf(stderr, "%s\n", box::ImportTimingsLine(r.times).c_str());
}

void RunCompact() {
  Storage s = MakeStorage(Args().box);
  if (!s.box->Exists()) Fail(ErrorCode::kNoRepository, "box " + Args().box + " does not exist");
  auto before = s.box->PageCounts();
  s.box->Compact();
  auto after = s.box->PageCounts();
  Print("compacted " + Args().box + ": " + std::to_string(before.first) + " -> " +
        std::to_string(after.first) + " pages");
}

CLI::App* Verb(CLI::App* box, const char* name, const char* help, bool with_box = true) {
  auto* c = box->add_subcommand(name, help);
  if (with_box) c->add_option("box", Args().box, "the box file")->required();
  c->add_option("--key", Args().key, "64 hex digits: a random 256-bit key instead of a password");
  return c;
}

}  // namespace

void RegisterBox(CLI::App& app) {
  auto* cmd = app.add_subcommand("box", "a single encrypted file: archive verbs (docs/box.md)");
  cmd->require_subcommand(1);
  Verb(cmd, "create", "create a new, empty box")->callback([] {
    Storage s = MakeStorage(Args().box);
    box::Box::Create(s.box, s.outer, SecretFor(true), Jobs());
    Print("created box " + Args().box);
  });
  auto* add = Verb(cmd, "add", "store a file or directory tree in the box (a new snapshot)");
  add->add_option("source", Args().source, "file or directory to add")->required();
  add->add_option("dest", Args().dest, "path in the box (default: /NAME)");
  add->callback(RunAdd);
  auto* list = Verb(cmd, "list", "list the box (or PATH and below)");
  list->add_option("path", Args().path, "path in the box");
  list->add_flag("-l,--long", Args().long_list, "mode, size and time");
  list->add_flag("--json", Args().json, "JSON array");
  list->callback(RunList);
  auto* ex = Verb(cmd, "extract", "write PATH (default: everything) under --target");
  ex->add_option("path", Args().path, "path in the box");
  ex->add_option("-t,--target", Args().target, "directory to write into")->required();
  ex->add_flag("--overwrite", Args().overwrite, "replace existing files (default: keep them)");
  ex->add_flag("--no-permissions", Args().no_permissions,
               "no owner, default modes (0666/0777 minus the umask) instead of the stored ones");
  ex->callback(RunExtract);
  auto* cat = Verb(cmd, "cat", "write one file of the box to stdout");
  cat->add_option("path", Args().path, "file in the box")->required();
  cat->callback([] { OpenBox()->Cat(Args().path, WriteOut); });
  auto* rm = Verb(cmd, "rm", "remove PATH from the box (a new snapshot)");
  rm->add_option("path", Args().path, "path in the box")->required();
  rm->callback([] { PrintChange("removed " + Args().path, OpenBox()->Remove(Args().path)); });
  auto* mv = Verb(cmd, "mv", "move FROM to TO in the box (a new snapshot)");
  mv->add_option("from", Args().from, "path in the box")->required();
  mv->add_option("to", Args().to, "new path (or a directory to move into)")->required();
  mv->callback([] {
    PrintChange("moved " + Args().from + " to " + Args().to,
                OpenBox()->Move(Args().from, Args().to));
  });
  Verb(cmd, "log", "the history: one snapshot per change")->callback(RunLog);
  auto* ex2 = Verb(cmd, "export", "copy the box into a new directory repository (restic reads it)");
  ex2->add_option("dir", Args().dir, "new repository directory")->required();
  ex2->callback([] {
    OpenBox()->Export(Args().dir);
    Print("exported " + Args().box + " to " + Args().dir);
  });
  auto* im = Verb(cmd, "import", "copy a directory repository into a new box", false);
  im->add_option("dir", Args().dir, "repository directory")->required();
  im->add_option("box", Args().box, "new box file")->required();
  im->callback([] {
    Storage s = MakeStorage(Args().box, /*alone=*/true);
    box::Box::Import(Args().dir, s.box);
    Print("imported " + Args().dir + " into " + Args().box);
  });
  Verb(cmd, "compact", "rewrite the box file without free space")->callback(RunCompact);
}

}  // namespace haven::cli
