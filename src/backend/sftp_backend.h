// A repository on an SFTP server, in restic's default layout (docs/format.md §1):
// PATH/config, PATH/{keys,locks,snapshots,index}/<name>, PATH/data/<XX>/<name>. The
// session is an SftpClient over `ssh HOST -s sftp` (sftp_location.h); the packets and how
// each Backend call maps to them are in docs/sftp.md.
//
// Save writes "<name>-tmp-<16 hex>" (OPEN with CREAT|EXCL, mode 0600), pipelined WRITEs,
// fsync@openssh.com when the server has it, CLOSE, then RENAME to the final name. RENAME
// in SFTP v3 never replaces an existing file, which is the contract (objects are
// immutable): when it fails and the name exists with the same size the upload counts as
// a retried one, a different size is kFatal. posix-rename@openssh.com is used only when
// RENAME failed and the target does not exist (a server whose plain rename cannot work).
// A reader never sees a partial object.
//
// Load/LoadInto pipeline STAT and OPEN, then up to 16 READs in flight, and close without
// waiting. List reads whole folders (OPENDIR/READDIR) and calls fn after each folder's
// handle is closed, so fn may call back in; a listing error throws. `locks` and `data/XX`
// may be missing (listed as empty, recreated by Save); other missing folders are damage.
//
// Errors: kNotFound for a missing object, kCorrupt for a range past the end, kIo for the
// server's refusals (its status text included) and for a lost session; none are
// retryable (a dead ssh is not revived, as in restic).
//
// Thread safety: every method may run concurrently; they share one pipelined session.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/sftp_client.h"
#include "backend/sftp_location.h"

namespace haven {

struct SftpOptions {
  std::string command;  // -o sftp.command: replaces the whole ssh command
  std::string args;     // -o sftp.args: extra ssh arguments
  int connections = 5;  // -o sftp.connections: the parallelism hint (restic's default)
};

class SftpBackend : public Backend {
 public:
  // Starts the command and the SFTP session; throws kIo (with the command's exit status;
  // ssh's own message is on stderr) when that fails.
  SftpBackend(SftpLocation location, SftpOptions options);

  std::string Location() const override { return location_.display; }
  bool Exists() override;
  // Creates PATH (and missing parents), then keys, locks, snapshots, index, data and
  // data/00..data/ff; existing folders are kept, an existing config throws kFatal.
  void Create() override;
  void Save(const Handle& h, ByteView data) override;
  void SaveFrom(const Handle& h, const SaveSource& src) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  // The range read as LoadInto reads it, kStreamChunk bytes at a time into a reused buffer,
  // each handed over when it has come (restore holds one chunk per worker, not the range).
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override;
  static constexpr uint64_t kStreamChunk = 4 << 20;
  std::optional<uint64_t> Stat(const Handle& h) override;
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;
  int Connections() const override { return options_.connections; }
  bool RoundTrips() const override { return true; }
  size_t RemoveStaleTempFiles(int64_t min_age_seconds) override;
  size_t CountStaleTempFiles(int64_t min_age_seconds) override;
  // The server's mtime (STAT), nullopt for a missing object or a server that sends none.
  std::optional<int64_t> ModTime(const Handle& h) override;

  // The server path of h (h is not validated).
  std::string PathOf(const Handle& h) const;
  SftpClient& client() { return *client_; }

 private:
  struct OpenFile {
    std::string handle;
    uint64_t size = 0;
  };
  std::string Join(const std::string& rel) const;
  std::string DirOf(const Handle& h) const;
  OpenFile OpenForRead(const Handle& h);
  void ReadRange(const Handle& h, const OpenFile& f, uint64_t offset, std::span<uint8_t> out);
  std::string OpenForWrite(const Handle& h, const std::string& tmp);
  // Save's one body: `data`, or `src` when it is set (SaveFrom).
  void Write(const Handle& h, ByteView data, const SaveSource* src);
  void WriteAll(const std::string& handle, const std::string& tmp, ByteView data,
                const SaveSource* src);
  void Commit(const Handle& h, const std::string& tmp, uint64_t size);
  void MakeDirs(const std::vector<std::string>& paths);
  void MakeDirChain(const std::string& path);
  // Every entry of a folder; nullopt when it does not exist.
  std::optional<std::vector<sftp::NameEntry>> ReadDir(const std::string& path);
  // The same for many folders, read in parallel.
  std::vector<std::optional<std::vector<sftp::NameEntry>>> ReadDirs(const std::vector<std::string>& paths);
  // fn for each valid object name among a folder's entries.
  void ListEntries(const std::string& path, const std::vector<sftp::NameEntry>& entries,
                   const std::function<void(const FileInfo&)>& fn);
  void RemovePath(const std::string& path);  // best effort, errors ignored
  // Temp files older than min_age_seconds: removed if `remove`; how many (removed, or found).
  size_t StaleTempFiles(int64_t min_age_seconds, bool remove);
  std::optional<uint64_t> StatPath(const std::string& path);  // best effort, errors ignored

  SftpLocation location_;
  SftpOptions options_;
  std::unique_ptr<SftpClient> client_;
};

}  // namespace haven
