#include "maintenance/upgrade_repo_v2.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "crypto/seal.h"

namespace haven {

namespace {

const Handle kConfig{FileType::kConfig, "config"};

// Writes the copy of the old config; returns its path.
std::string BackUp(const std::string& tmp_base, ByteView raw) {
  std::string dir = tmp_base + "/restic-migrate-upgrade-repo-v2-XXXXXX";
  if (!mkdtemp(dir.data()))
    Fail(ErrorCode::kIo, "create temp dir failed: " + std::string(std::strerror(errno)));
  const std::string path = dir + "/config";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  size_t done = 0;
  while (ok && done < raw.size()) {
    const ssize_t n = write(fd, raw.data() + done, raw.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && fsync(fd) == 0;
  const int err = errno;
  if (fd >= 0) close(fd);
  if (!ok)
    Fail(ErrorCode::kIo, "write config file backup to " + dir + " failed: " + std::strerror(err));
  return path;
}

}  // namespace

bool UpgradeRepoV2Applicable(const Repository& repo) { return repo.config().version == 1; }

void UpgradeRepoV2(Repository& repo, const std::string& tmp_base) {
  Backend& be = repo.backend();
  Bytes raw;
  try {
    raw = be.Load(kConfig);
  } catch (const Error& e) {
    Fail(ErrorCode::kIo, std::string("load config file failed: ") + e.what());
  }
  const std::string backup = BackUp(tmp_base, raw);
  RepoConfig cfg = repo.config();
  cfg.version = 2;
  const Bytes sealed = crypto::Seal(repo.key(), AsBytes(cfg.ToJson()));
  std::string upload_error;
  try {
    try {
      be.Remove(kConfig);
    } catch (const Error& e) {
      throw Error(e.code(), std::string("remove config failed: ") + e.what());
    }
    try {
      be.Save(kConfig, sealed);
    } catch (const Error& e) {
      throw Error(e.code(), std::string("save new config file failed: ") + e.what());
    }
  } catch (const Error& e) {
    upload_error = e.what();
  }
  if (upload_error.empty()) {
    unlink(backup.c_str());
    rmdir(backup.substr(0, backup.rfind('/')).c_str());
    return;
  }
  // restic's contingency: put the original bytes back.
  std::string reupload_error;
  try {
    try {
      be.Remove(kConfig);
    } catch (const Error&) {
    }
    be.Save(kConfig, raw);
  } catch (const Error& e) {
    reupload_error = e.what();
  }
  if (!reupload_error.empty())
    Fail(ErrorCode::kIo, "error uploading config (" + upload_error +
                             "), re-uploading old config filed failed as well (" + reupload_error +
                             "), but there is a backup of the config file in " + backup);
  Fail(ErrorCode::kIo, "error uploading config (" + upload_error +
                           "), re-uploaded old config was successful, there is a backup of the "
                           "config file in " + backup);
}

}  // namespace haven
