#include <simdjson.h>
#include <unistd.h>

#include <iostream>

#include "cli/common.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "repo/gojson.h"
#include "repo/key_file.h"

namespace haven::cli {

namespace {

// Indented JSON (two spaces) like Go's json.MarshalIndent.
void Pretty(simdjson::dom::element e, int depth, std::string& out) {
  std::string pad(static_cast<size_t>(depth + 1) * 2, ' ');
  std::string end_pad(static_cast<size_t>(depth) * 2, ' ');
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      simdjson::dom::object obj = e.get_object().value_unsafe();
      if (obj.size() == 0) {
        out += "{}";
        return;
      }
      out += "{\n";
      bool first = true;
      for (auto field : obj) {
        if (!first) out += ",\n";
        first = false;
        out += pad;
        gojson::AppendString(out, field.key);
        out += ": ";
        Pretty(field.value, depth + 1, out);
      }
      out += "\n" + end_pad + "}";
      return;
    }
    case simdjson::dom::element_type::ARRAY: {
      simdjson::dom::array arr = e.get_array().value_unsafe();
      if (arr.size() == 0) {
        out += "[]";
        return;
      }
      out += "[\n";
      bool first = true;
      for (auto v : arr) {
        if (!first) out += ",\n";
        first = false;
        out += pad;
        Pretty(v, depth + 1, out);
      }
      out += "\n" + end_pad + "]";
      return;
    }
    case simdjson::dom::element_type::STRING:
      gojson::AppendString(out, e.get_string().value_unsafe());
      return;
    default:
      out += simdjson::minify(e);
  }
}

std::string Indent(std::string_view json) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  if (json.empty() || p.parse(json.data(), json.size()).get(doc)) return std::string(json);
  std::string out;
  Pretty(doc, 0, out);
  return out + "\n";
}

FileId FullId(Repository& repo, FileType t, const std::string& arg) {
  if (auto id = FileId::FromHex(arg)) return *id;
  std::optional<FileId> found;
  for (const FileId& id : repo.ListIds(t)) {
    if (id.Hex().compare(0, arg.size(), arg) == 0) {
      if (found) Fail(ErrorCode::kInvalidArgument, "prefix \"" + arg + "\" is ambiguous");
      found = id;
    }
  }
  if (!found || arg.empty()) Fail(ErrorCode::kNotFound, "no " + std::string(FileTypeName(t)) + " matched \"" + arg + "\"");
  return *found;
}

Bytes Text(const std::string& s) { return Bytes(s.begin(), s.end()); }

// What `cat TYPE ID` prints: JSON text, or raw bytes (a pack, a blob).
Bytes ReadObject(Repository& repo, const std::string& type, const std::string& id,
                     std::vector<Repository::SnapshotFailure>& failures) {
  auto need_id = [&] {
    if (id.empty()) Fail(ErrorCode::kInvalidArgument, "cat " + type + " needs an ID");
  };
  if (type == "config") return Text(Indent(repo.config().ToJson()));
  if (type == "masterkey") return Text(Indent(MasterKeyToJson(repo.key())));
  if (type == "index") {
    need_id();
    return Text(repo.LoadJson(FileType::kIndex, FullId(repo, FileType::kIndex, id)));
  }
  if (type == "snapshot") {
    need_id();
    auto snaps = repo.LoadSnapshots(&failures);
    FileId sid = ResolveSnapshot(id, snaps);
    return Text(Indent(repo.LoadJson(FileType::kSnapshot, sid)));
  }
  if (type == "lock") {
    need_id();
    return Text(Indent(repo.LoadJson(FileType::kLock, FullId(repo, FileType::kLock, id))));
  }
  if (type == "key") {
    need_id();
    FileId kid = FullId(repo, FileType::kKey, id);
    Bytes raw = repo.backend().Load({FileType::kKey, kid.Hex()});
    return Text(Indent(AsChars(raw)));
  }
  if (type == "pack") {
    need_id();
    FileId pid = FullId(repo, FileType::kPack, id);
    return repo.backend().Load({FileType::kPack, pid.Hex()});
  }
  if (type == "blob" || type == "tree") {
    need_id();
    auto bid = BlobId::FromHex(id);
    if (!bid) Fail(ErrorCode::kInvalidArgument, "invalid blob id \"" + id + "\"");
    auto indexed = IndexedRepository::Load(repo);
    BlobType bt = type == "tree" ? BlobType::kTree : BlobType::kData;
    if (type == "blob" && !indexed->index().Has(BlobType::kData, *bid) &&
        indexed->index().Has(BlobType::kTree, *bid))
      bt = BlobType::kTree;
    return indexed->LoadBlob(bt, *bid);
  }
  Fail(ErrorCode::kInvalidArgument, "invalid type \"" + type + "\"");
}

}  // namespace

void RegisterCat(CLI::App& app) {
  static std::string type, id;
  auto* cmd = app.add_subcommand(
      "cat", "print internal objects: config, masterkey, index ID, snapshot ID, key ID, "
             "lock ID, pack ID, blob ID, tree ID");
  cmd->add_option("type", type, "object type")->required();
  cmd->add_option("id", id, "object id (or unique prefix)");
  cmd->callback([] {
    auto repo = OpenRepository();
    // The object is read while the lock's check runs and printed once it is confirmed.
    auto lock = LockRepositoryOverlapped(*repo, false);
    std::vector<Repository::SnapshotFailure> failures;  // warned after the confirmation
    const Bytes out = ReadThenWarn(lock, [&] { repo->WarnIgnored(failures); },
                                   [&] { return ReadObject(*repo, type, id, failures); });
    std::cout.flush();
    WriteStdout(out);
  });
}

}  // namespace haven::cli
