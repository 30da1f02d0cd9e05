#include <cstdio>

#include "cli/common.h"
#include "core/error.h"
#include "repo/key_file.h"

namespace haven::cli {

namespace {

KeyFile LoadKey(Repository& repo, const FileId& id) {
  Bytes raw = repo.backend().Load({FileType::kKey, id.Hex()});
  return KeyFile::Parse(AsChars(raw), id.Hex());
}

// What a new key records besides the password: --user and --host (restic >= 0.15) replace
// the current user and host name in the key file. They are labels for `key list`, not
// authenticated (restic stores them outside the encrypted part too).
struct NewKeyOptions {
  std::string password_file;
  std::string user, host;
};

FileId AddKey(Repository& repo, const NewKeyOptions& o) {
  std::string pw = ReadPasswordFrom(o.password_file, "", "enter new password: ",
                                    o.password_file.empty());
  KeyFile current = LoadKey(repo, repo.key_id());
  KeyFile k = KeyFile::Create(repo.key(), pw, current.params, Jobs());
  if (!o.user.empty()) k.username = o.user;
  if (!o.host.empty()) k.hostname = o.host;
  std::string json = k.ToJson();
  FileId id(Sha256(AsBytes(json)));
  repo.backend().Save({FileType::kKey, id.Hex()}, AsBytes(json));
  return id;
}

FileId ResolveKey(Repository& repo, const std::string& arg) {
  std::optional<FileId> found;
  for (const FileId& id : repo.ListIds(FileType::kKey)) {
    if (id.Hex().compare(0, arg.size(), arg) == 0) {
      if (found) Fail(ErrorCode::kInvalidArgument, "key prefix \"" + arg + "\" is ambiguous");
      found = id;
    }
  }
  if (!found || arg.empty()) Fail(ErrorCode::kNotFound, "no key matched \"" + arg + "\"");
  return *found;
}

}  // namespace

void RegisterKey(CLI::App& app) {
  static NewKeyOptions new_key;
  static std::string remove_id;
  auto* cmd = app.add_subcommand("key", "manage keys (passwords)");
  cmd->require_subcommand(1);
  auto* list = cmd->add_subcommand("list", "list keys");
  list->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    std::string json = "[";
    char line[512];
    std::snprintf(line, sizeof(line), " %-10s  %-10s  %-10s  %s", "ID", "User", "Host", "Created");
    std::vector<std::string> rows{line, std::string(50, '-')};
    bool first = true;
    for (const FileId& id : repo->ListIds(FileType::kKey)) {
      KeyFile k = LoadKey(*repo, id);
      bool current = id == repo->key_id();
      std::string created = k.created;
      if (auto t = gojson::ParseTime(k.created)) created = FormatTimeShort(*t);
      std::snprintf(line, sizeof(line), "%s%-10s  %-10s  %-10s  %s", current ? "*" : " ",
                    id.Short().c_str(), k.username.c_str(), k.hostname.c_str(), created.c_str());
      rows.push_back(line);
      if (!first) json += ',';
      first = false;
      json += std::string("{\"current\":") + (current ? "true" : "false") + ",\"id\":\"" +
              id.Hex() + "\",\"userName\":";
      gojson::AppendString(json, k.username);
      json += ",\"hostName\":";
      gojson::AppendString(json, k.hostname);
      json += ",\"created\":";
      gojson::AppendString(json, created);
      json += '}';
    }
    json += "]";
    if (Globals().json) {
      std::printf("%s\n", json.c_str());
      return;
    }
    rows.push_back(std::string(50, '-'));
    for (const auto& r : rows) Print(r);
  });
  auto* add = cmd->add_subcommand("add", "add a new key (password)");
  add->add_option("--new-password-file", new_key.password_file, "file with the new password");
  add->add_option("--user", new_key.user, "the username for the new key (default: current user)");
  add->add_option("--host", new_key.host, "the hostname for the new key (default: this host)");
  add->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    // Opening tries at most kMaxKeysTried key files (haven and restic alike), so the
    // password of a key beyond them might never open the repository: refuse it.
    size_t keys = repo->ListIds(FileType::kKey).size();
    if (keys >= size_t{Repository::kMaxKeysTried})
      Fail(ErrorCode::kInvalidArgument,
           "the repository has " + std::to_string(keys) + " keys, and haven and restic try at "
           "most " + std::to_string(Repository::kMaxKeysTried) +
               " when opening it: a new password might never open it. Remove a key first "
               "(haven key list, haven key remove ID)");
    FileId id = AddKey(*repo, new_key);
    Print("saved new key as " + id.Short());
  });
  auto* rm = cmd->add_subcommand("remove", "remove a key");
  rm->add_option("id", remove_id, "key id or prefix")->required();
  rm->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, true);
    FileId id = ResolveKey(*repo, remove_id);
    if (id == repo->key_id())
      Fail(ErrorCode::kFatal, "refusing to remove key currently used to access repository");
    repo->backend().Remove({FileType::kKey, id.Hex()});
    Print("removed key " + id.Short());
  });
  auto* pw = cmd->add_subcommand("passwd", "change the password of the current key");
  pw->add_option("--new-password-file", new_key.password_file, "file with the new password");
  pw->add_option("--user", new_key.user, "the username for the new key (default: current user)");
  pw->add_option("--host", new_key.host, "the hostname for the new key (default: this host)");
  pw->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, true);
    FileId fresh = AddKey(*repo, new_key);  // new key first, then remove the old
    repo->backend().Remove({FileType::kKey, repo->key_id().Hex()});
    Print("saved new key as " + fresh.Short());
  });
}

}  // namespace haven::cli
