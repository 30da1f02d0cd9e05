#include "backend/sftp_backend.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <deque>
#include <utility>

#include "backend/posix_io.h"
#include "backend/rate_limiter.h"
#include "core/error.h"

namespace haven {
namespace {

using sftp::Type;

constexpr size_t kWindow = 16;          // READ/WRITE requests in flight per call
constexpr uint64_t kMaxWholeLoad = uint64_t{4} << 30;  // packs are <= 128 MiB, indexes far smaller
constexpr uint32_t kFileMode = 0600;    // restic's mode for files it writes over sftp
constexpr uint32_t kDirMode = 0700;

[[noreturn]] void FailStatus(const sftp::Reply& r, std::string_view op, const std::string& path) {
  std::string msg = "sftp: " + std::string(op) + " " + path + ": ";
  if (r.type != Type::kStatus) {
    Fail(ErrorCode::kIo, msg + "unexpected " + sftp::TypeName(static_cast<uint8_t>(r.type)) + " reply");
  }
  msg += sftp::StatusName(r.status);
  if (!r.message.empty()) msg += " (" + r.message + ")";
  Fail(r.status == sftp::kNoSuchFile ? ErrorCode::kNotFound : ErrorCode::kIo, std::move(msg));
}

void ExpectOk(const sftp::Reply& r, std::string_view op, const std::string& path) {
  if (r.type != Type::kStatus || r.status != sftp::kOk) FailStatus(r, op, path);
}

bool IsStatus(const sftp::Reply& r, uint32_t status) {
  return r.type == Type::kStatus && r.status == status;
}

[[noreturn]] void FailShort(const Handle& h, uint64_t offset, uint64_t length, uint64_t size) {
  Fail(ErrorCode::kCorrupt, "sftp: short read of " + h.ToString() + ": " + std::to_string(length) +
                                " bytes at offset " + std::to_string(offset) + " wanted, the object has " +
                                std::to_string(size) + " bytes");
}

bool MayBeMissing(FileType t) { return t == FileType::kLock || t == FileType::kPack; }

bool IsHexPair(const std::string& s) {
  return s.size() == 2 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

SftpBackend::SftpBackend(SftpLocation location, SftpOptions options)
    : location_(std::move(location)), options_(std::move(options)) {
  client_ = std::make_unique<SftpClient>(SftpCommand(location_, options_.command, options_.args));
}

std::string SftpBackend::Join(const std::string& rel) const {
  if (location_.path == "/") return "/" + rel;
  return location_.path + "/" + rel;
}

std::string SftpBackend::PathOf(const Handle& h) const {
  if (h.type == FileType::kConfig) return Join("config");
  if (h.type == FileType::kPack) return Join("data/" + h.name.substr(0, 2) + "/" + h.name);
  return Join(std::string(FileTypeDir(h.type)) + "/" + h.name);
}

std::string SftpBackend::DirOf(const Handle& h) const {
  std::string p = PathOf(h);
  return p.substr(0, p.rfind('/'));
}

bool SftpBackend::Exists() {
  std::string path = Join("config");
  auto r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodePathRequest(Type::kStat, id, path); });
  if (r.reply.type == Type::kAttrs) return true;
  if (IsStatus(r.reply, sftp::kNoSuchFile)) return false;
  FailStatus(r.reply, "stat", path);
}

// ---- Create -------------------------------------------------------------------------------

void SftpBackend::MakeDirChain(const std::string& path) {
  std::vector<std::string> chain;
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    chain.push_back(path.substr(0, pos));
  }
  chain.push_back(path);
  for (const std::string& p : chain) MakeDirs({p});
}

// MKDIR for every path at once; one that fails must exist as a folder.
void SftpBackend::MakeDirs(const std::vector<std::string>& paths) {
  sftp::Attrs mode{.permissions = kDirMode};
  std::vector<SftpClient::Call> calls;
  for (const std::string& p : paths) {
    calls.push_back(client_->Send([&](uint32_t id) { return sftp::EncodeMkdir(id, p, mode); }));
  }
  std::vector<size_t> failed;
  std::vector<SftpClient::Response> replies;
  for (size_t i = 0; i < calls.size(); ++i) {
    replies.push_back(client_->Wait(calls[i]));
    if (!IsStatus(replies.back().reply, sftp::kOk)) failed.push_back(i);
  }
  for (size_t i : failed) {
    auto st = client_->Roundtrip([&](uint32_t id) { return sftp::EncodePathRequest(Type::kStat, id, paths[i]); });
    if (st.reply.type == Type::kAttrs && st.reply.attrs.IsDir()) continue;
    if (st.reply.type == Type::kAttrs) Fail(ErrorCode::kIo, "sftp: " + paths[i] + " exists and is not a folder");
    Fail(ErrorCode::kIo, "sftp: create folder " + paths[i] + ": " + sftp::StatusName(replies[i].reply.status) +
                             (replies[i].reply.message.empty() ? "" : " (" + replies[i].reply.message + ")"));
  }
}

void SftpBackend::Create() {
  if (Exists()) Fail(ErrorCode::kFatal, "sftp: a repository exists at " + location_.display + " (config found)");
  if (location_.path != "." && location_.path != "/") MakeDirChain(location_.path);
  std::vector<std::string> top;
  for (const char* d : {"keys", "locks", "snapshots", "index", "data"}) top.push_back(Join(d));
  MakeDirs(top);
  std::vector<std::string> data;
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 256; ++i) data.push_back(Join(std::string("data/") + kHex[i >> 4] + kHex[i & 15]));
  MakeDirs(data);
}

// ---- Save ---------------------------------------------------------------------------------

std::string SftpBackend::OpenForWrite(const Handle& h, const std::string& tmp) {
  sftp::Attrs mode{.permissions = kFileMode};
  auto open = [&] {
    return client_->Roundtrip([&](uint32_t id) {
      return sftp::EncodeOpen(id, tmp, sftp::kOpenWrite | sftp::kOpenCreate | sftp::kOpenExclusive, mode);
    });
  };
  auto r = open();
  if (IsStatus(r.reply, sftp::kNoSuchFile) && MayBeMissing(h.type)) {
    MakeDirs({DirOf(h)});
    r = open();
  }
  if (r.reply.type != Type::kHandle) {
    // A missing folder that must exist is damage, not a missing object.
    if (IsStatus(r.reply, sftp::kNoSuchFile)) {
      Fail(ErrorCode::kIo, "sftp: create " + tmp + ": its folder does not exist (" + r.reply.message + ")");
    }
    FailStatus(r.reply, "create", tmp);
  }
  return r.reply.handle;
}

void SftpBackend::WriteAll(const std::string& handle, const std::string& tmp, ByteView data,
                           const SaveSource* src) {
  std::deque<SftpClient::Call> inflight;
  const size_t chunk = client_->write_chunk();
  const uint64_t size = src ? src->size : data.size();
  Bytes buffer(src ? static_cast<size_t>(std::min<uint64_t>(chunk, size)) : 0);
  for (uint64_t off = 0; off < size || !inflight.empty();) {
    while (off < size && inflight.size() < kWindow) {
      const size_t n =
          static_cast<size_t>(std::min<uint64_t>({chunk, size - off, UploadPieceLimit()}));
      ByteView part;
      if (src) {  // the packet is encoded (copied) before the buffer is read into again
        src->read(off, std::span<uint8_t>(buffer.data(), n));
        part = ByteView(buffer.data(), n);
      } else {
        part = data.subspan(static_cast<size_t>(off), n);
      }
      PayUploadBytes(part.size());  // --limit-upload, as the bytes go out
      inflight.push_back(client_->Send([&](uint32_t id) { return sftp::EncodeWrite(id, handle, off, part); }));
      off += part.size();
    }
    if (inflight.empty()) break;
    auto r = client_->Wait(inflight.front());
    inflight.pop_front();
    ExpectOk(r.reply, "write", tmp);
  }
  if (client_->HasExtension("fsync@openssh.com")) {
    auto r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodeFsync(id, handle); });
    if (!IsStatus(r.reply, sftp::kOpUnsupported)) ExpectOk(r.reply, "fsync", tmp);
  }
}

void SftpBackend::Commit(const Handle& h, const std::string& tmp, uint64_t size) {
  const std::string path = PathOf(h);
  auto r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodeRename(id, tmp, path); });
  if (IsStatus(r.reply, sftp::kOk)) return;
  // Not renamed: OpenSSH's RENAME refuses to replace an existing file.
  std::optional<uint64_t> existing = Stat(h);
  if (!existing && client_->HasExtension("posix-rename@openssh.com")) {
    r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodePosixRename(id, tmp, path); });
    if (IsStatus(r.reply, sftp::kOk)) return;
  }
  RemovePath(tmp);
  if (existing && *existing == size) return;  // a retried upload of the same object
  if (existing) {
    Fail(ErrorCode::kFatal, "sftp: " + path + " already exists with " + std::to_string(*existing) +
                                " bytes; not replaced by " + std::to_string(size) + " bytes");
  }
  FailStatus(r.reply, "rename " + tmp + " to", path);
}

void SftpBackend::Save(const Handle& h, ByteView data) { Write(h, data, nullptr); }

void SftpBackend::SaveFrom(const Handle& h, const SaveSource& src) { Write(h, {}, &src); }

void SftpBackend::Write(const Handle& h, ByteView data, const SaveSource* src) {
  CheckHandle(h);
  const std::string tmp = PathOf(h) + "-tmp-" + posix::RandomSuffix();
  std::string handle = OpenForWrite(h, tmp);
  bool open = true;
  try {
    WriteAll(handle, tmp, data, src);
    open = false;
    auto r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodeClose(id, handle); });
    ExpectOk(r.reply, "close", tmp);
  } catch (...) {
    if (open && !client_->DeadReason()) {
      try {
        client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, handle); });
      } catch (const Error&) {
      }
    }
    RemovePath(tmp);
    throw;
  }
  Commit(h, tmp, src ? src->size : data.size());
}

void SftpBackend::RemovePath(const std::string& path) {
  try {
    client_->Roundtrip([&](uint32_t id) { return sftp::EncodePathRequest(Type::kRemove, id, path); });
  } catch (const Error&) {
    // best effort: a leftover temp file is never listed and is removed by prune later
  }
}

// ---- Load ---------------------------------------------------------------------------------

SftpBackend::OpenFile SftpBackend::OpenForRead(const Handle& h) {
  const std::string path = PathOf(h);
  auto stat = client_->Send([&](uint32_t id) { return sftp::EncodePathRequest(Type::kStat, id, path); });
  auto open = client_->Send([&](uint32_t id) { return sftp::EncodeOpen(id, path, sftp::kOpenRead); });
  auto st = client_->Wait(stat);
  auto op = client_->Wait(open);
  if (op.reply.type != Type::kHandle) FailStatus(op.reply, "open", path);
  OpenFile f{op.reply.handle, 0};
  if (st.reply.type != Type::kAttrs || !st.reply.attrs.size) {
    client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, f.handle); });
    if (st.reply.type == Type::kAttrs) Fail(ErrorCode::kIo, "sftp: stat " + path + ": the server sent no size");
    FailStatus(st.reply, "stat", path);
  }
  f.size = *st.reply.attrs.size;
  return f;
}

void SftpBackend::ReadRange(const Handle& h, const OpenFile& f, uint64_t offset, std::span<uint8_t> out) {
  struct Part {
    SftpClient::Call call;
    uint64_t pos;  // into out
    uint32_t len;
  };
  std::deque<Part> inflight;
  const uint64_t chunk = client_->read_chunk();
  auto send = [&](uint64_t pos, uint64_t len) {
    uint32_t n = static_cast<uint32_t>(std::min(chunk, len));
    inflight.push_back(Part{client_->Send([&](uint32_t id) { return sftp::EncodeRead(id, f.handle, offset + pos, n); }),
                            pos, n});
  };
  uint64_t next = 0;
  while (next < out.size() || !inflight.empty()) {
    while (next < out.size() && inflight.size() < kWindow) {
      send(next, out.size() - next);
      next += inflight.back().len;
    }
    Part p = std::move(inflight.front());
    inflight.pop_front();
    auto r = client_->Wait(p.call);
    if (r.reply.type == Type::kData && !r.reply.data.empty() && r.reply.data.size() <= p.len) {
      std::memcpy(out.data() + p.pos, r.reply.data.data(), r.reply.data.size());
      // A server may answer with fewer bytes than asked: ask again for the rest.
      if (r.reply.data.size() < p.len) send(p.pos + r.reply.data.size(), p.len - r.reply.data.size());
      continue;
    }
    if (r.reply.type == Type::kData) {
      Fail(ErrorCode::kIo, "sftp: read " + PathOf(h) + ": the server sent " + std::to_string(r.reply.data.size()) +
                               " bytes for a request of " + std::to_string(p.len));
    }
    if (IsStatus(r.reply, sftp::kEof)) FailShort(h, offset, out.size(), offset + p.pos);
    FailStatus(r.reply, "read", PathOf(h));
  }
}

void SftpBackend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  CheckHandle(h);
  OpenFile f = OpenForRead(h);
  try {
    if (offset > f.size || out.size() > f.size - offset) FailShort(h, offset, out.size(), f.size);
    ReadRange(h, f, offset, out);
  } catch (...) {
    if (!client_->DeadReason()) client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, f.handle); });
    throw;
  }
  client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, f.handle); });
}

void SftpBackend::LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                             const std::function<void(ByteView)>& sink) {
  if (length == 0) return;
  CheckHandle(h);
  OpenFile f = OpenForRead(h);
  try {
    if (offset > f.size || length > f.size - offset) FailShort(h, offset, length, f.size);
    thread_local Bytes buf;  // grown only
    for (uint64_t done = 0; done < length;) {
      const size_t n = static_cast<size_t>(std::min(kStreamChunk, length - done));
      if (buf.size() < n) buf.resize(n);
      ReadRange(h, f, offset + done, std::span<uint8_t>(buf.data(), n));
      done += n;
      sink(ByteView(buf.data(), n));
    }
  } catch (...) {
    if (!client_->DeadReason()) client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, f.handle); });
    throw;
  }
  client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, f.handle); });
}

Bytes SftpBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  CheckHandle(h);
  OpenFile f = OpenForRead(h);
  Bytes out;
  try {
    if (offset > f.size || length > f.size - offset) FailShort(h, offset, length, f.size);
    if (!length && f.size - offset > kMaxWholeLoad) {
      // The size comes from the server: never allocate what a hostile STAT claims.
      Fail(ErrorCode::kIo, "sftp: load " + PathOf(h) + ": the server reports " + std::to_string(f.size) +
                               " bytes, more than any repository file holds (" +
                               std::to_string(kMaxWholeLoad >> 30) + " GiB)");
    }
    out.resize(length ? length : f.size - offset);
    ReadRange(h, f, offset, out);
  } catch (...) {
    if (!client_->DeadReason()) client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, f.handle); });
    throw;
  }
  client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, f.handle); });
  return out;
}

// ---- Stat, Remove, List -------------------------------------------------------------------

std::optional<uint64_t> SftpBackend::Stat(const Handle& h) {
  CheckHandle(h);
  return StatPath(PathOf(h));
}

std::optional<uint64_t> SftpBackend::StatPath(const std::string& path) {
  auto r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodePathRequest(Type::kStat, id, path); });
  if (IsStatus(r.reply, sftp::kNoSuchFile)) return std::nullopt;
  if (r.reply.type != Type::kAttrs) FailStatus(r.reply, "stat", path);
  if (!r.reply.attrs.size) Fail(ErrorCode::kIo, "sftp: stat " + path + ": the server sent no size");
  return *r.reply.attrs.size;
}

void SftpBackend::Remove(const Handle& h) {
  CheckHandle(h);
  const std::string path = PathOf(h);
  auto r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodePathRequest(Type::kRemove, id, path); });
  ExpectOk(r.reply, "remove", path);
}

namespace {

[[noreturn]] void FailList(const sftp::Reply& r, const std::string& path) {
  Fail(ErrorCode::kIo, "sftp: list " + path + ": " +
                           (r.type == Type::kStatus ? sftp::StatusName(r.status) + (r.message.empty() ? "" : " (" + r.message + ")")
                                                    : "unexpected " + sftp::TypeName(static_cast<uint8_t>(r.type)) + " reply"));
}

}  // namespace

// Up to kWindow folders are read at once: OPENDIR, READDIR until EOF, CLOSE (not waited
// for), each folder's next request sent as soon as its previous reply is in.
std::vector<std::optional<std::vector<sftp::NameEntry>>> SftpBackend::ReadDirs(const std::vector<std::string>& paths) {
  struct Dir {
    size_t index;
    std::string handle;  // empty while OPENDIR is in flight
    SftpClient::Call call;
  };
  std::vector<std::optional<std::vector<sftp::NameEntry>>> out(paths.size());
  std::deque<Dir> active;
  auto close = [&](const std::string& handle) {
    if (!client_->DeadReason()) client_->SendAndForget([&](uint32_t id) { return sftp::EncodeClose(id, handle); });
  };
  auto readdir = [&](Dir d) {
    d.call = client_->Send([&](uint32_t id) { return sftp::EncodeHandleRequest(Type::kReaddir, id, d.handle); });
    active.push_back(std::move(d));
  };
  try {
    for (size_t next = 0; next < paths.size() || !active.empty();) {
      while (active.size() < kWindow && next < paths.size()) {
        const std::string& p = paths[next];
        active.push_back(Dir{next++, "", client_->Send([&](uint32_t id) { return sftp::EncodePathRequest(Type::kOpendir, id, p); })});
      }
      Dir d = std::move(active.front());
      active.pop_front();
      auto r = client_->Wait(d.call);
      const std::string& path = paths[d.index];
      if (d.handle.empty()) {
        if (IsStatus(r.reply, sftp::kNoSuchFile)) continue;  // missing: out stays nullopt
        if (r.reply.type != Type::kHandle) FailList(r.reply, path);
        out[d.index].emplace();
        d.handle = r.reply.handle;
        readdir(std::move(d));
      } else if (IsStatus(r.reply, sftp::kEof)) {
        close(d.handle);
      } else if (r.reply.type == Type::kName) {
        for (auto& e : r.reply.names) out[d.index]->push_back(std::move(e));
        readdir(std::move(d));
      } else {
        close(d.handle);
        FailList(r.reply, path);
      }
    }
  } catch (...) {
    for (Dir& d : active) {
      if (!d.handle.empty()) close(d.handle);
    }
    throw;
  }
  return out;
}

std::optional<std::vector<sftp::NameEntry>> SftpBackend::ReadDir(const std::string& path) {
  return std::move(ReadDirs({path})[0]);
}

void SftpBackend::ListEntries(const std::string& path, const std::vector<sftp::NameEntry>& entries,
                              const std::function<void(const FileInfo&)>& fn) {
  for (const sftp::NameEntry& e : entries) {
    if (!IsValidObjectName(e.name)) continue;
    if (e.attrs.permissions && !e.attrs.IsRegular()) continue;
    uint64_t size = 0;
    if (e.attrs.size) {
      size = *e.attrs.size;
    } else {
      auto s = StatPath(path + "/" + e.name);
      if (!s) continue;  // removed meanwhile
      size = *s;
    }
    fn(FileInfo{e.name, size});
  }
}

void SftpBackend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  if (t == FileType::kConfig) Fail(ErrorCode::kInvalidArgument, "sftp: config is not a listable type");
  if (t != FileType::kPack) {
    const std::string dir = Join(FileTypeDir(t));
    auto entries = ReadDir(dir);
    if (!entries && t == FileType::kLock) return;
    if (!entries) Fail(ErrorCode::kIo, "sftp: list " + dir + ": the folder does not exist");
    ListEntries(dir, *entries, fn);
    return;
  }
  auto subdirs = ReadDir(Join("data"));
  if (!subdirs) Fail(ErrorCode::kIo, "sftp: list " + Join("data") + ": the folder does not exist");
  std::vector<std::string> dirs;
  for (const auto& e : *subdirs) {
    if (IsHexPair(e.name) && (!e.attrs.permissions || e.attrs.IsDir())) dirs.push_back(Join("data/" + e.name));
  }
  std::sort(dirs.begin(), dirs.end());
  // A batch of folders is read (pipelined) before its entries go to fn, so fn may call
  // back in, and memory holds one batch's names, not the whole repository's.
  for (size_t b = 0; b < dirs.size(); b += 2 * kWindow) {
    std::vector<std::string> batch(dirs.begin() + b, dirs.begin() + std::min(dirs.size(), b + 2 * kWindow));
    auto listed = ReadDirs(batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (listed[i]) ListEntries(batch[i], *listed[i], fn);  // a folder removed meanwhile is empty
    }
  }
}

size_t SftpBackend::RemoveStaleTempFiles(int64_t min_age_seconds) {
  return StaleTempFiles(min_age_seconds, true);
}

size_t SftpBackend::CountStaleTempFiles(int64_t min_age_seconds) {
  return StaleTempFiles(min_age_seconds, false);
}

size_t SftpBackend::StaleTempFiles(int64_t min_age_seconds, bool remove) {
  std::vector<std::string> dirs;
  for (FileType t : {FileType::kKey, FileType::kLock, FileType::kSnapshot, FileType::kIndex}) {
    dirs.push_back(Join(FileTypeDir(t)));
  }
  if (auto subdirs = ReadDir(Join("data"))) {
    for (const auto& e : *subdirs) {
      if (IsHexPair(e.name)) dirs.push_back(Join("data/" + e.name));
    }
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  size_t found = 0;
  auto listed = ReadDirs(dirs);
  for (size_t i = 0; i < dirs.size(); ++i) {
    if (!listed[i]) continue;
    for (const auto& e : *listed[i]) {
      if (e.name.find("-tmp-") == std::string::npos) continue;
      if (!e.attrs.mtime || now - static_cast<int64_t>(*e.attrs.mtime) < min_age_seconds) continue;
      if (!remove) {
        ++found;
        continue;
      }
      const std::string path = dirs[i] + "/" + e.name;
      auto r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodePathRequest(Type::kRemove, id, path); });
      if (IsStatus(r.reply, sftp::kOk)) ++found;
    }
  }
  return found;
}

std::optional<int64_t> SftpBackend::ModTime(const Handle& h) {
  CheckHandle(h);
  const std::string path = PathOf(h);
  auto r = client_->Roundtrip([&](uint32_t id) { return sftp::EncodePathRequest(Type::kStat, id, path); });
  if (IsStatus(r.reply, sftp::kNoSuchFile)) return std::nullopt;
  if (r.reply.type != Type::kAttrs) FailStatus(r.reply, "stat", path);
  if (!r.reply.attrs.mtime) return std::nullopt;
  return static_cast<int64_t>(*r.reply.attrs.mtime);
}

}  // namespace haven
