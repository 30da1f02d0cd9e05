#include "archiver/folder_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <utility>

#include "backend/posix_io.h"
#include "core/error.h"
#include "crypto/seal.h"
#include "repo/host_info.h"

namespace haven {

namespace {

constexpr char kMagic[8] = {'H', 'V', 'F', 'S', 'T', '0', '0', '4'};
constexpr size_t kHeader = 8 + 32 + 32 + 32 + 8;  // up to the index file count
constexpr size_t kRecord = 32 + 32 + 8;  // a folder without its subtrees
constexpr size_t kBlobRecord = 1 + 32 + 32 + 4 + 4 + 4;

// The writers fill a buffer sized once (g++ 12 flags inserts into a growing vector with
// false -Wstringop-overflow warnings).
uint8_t* PutU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) *p++ = static_cast<uint8_t>(v >> (8 * i));
  return p;
}
uint8_t* PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) *p++ = static_cast<uint8_t>(v >> (8 * i));
  return p;
}
uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}
uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}
uint8_t* PutRaw(uint8_t* p, const RawId& r) {
  std::memcpy(p, r.bytes.data(), r.bytes.size());
  return p + r.bytes.size();
}
RawId GetRaw(const uint8_t* p) {
  RawId r;
  std::memcpy(r.bytes.data(), p, r.bytes.size());
  return r;
}
bool KeyLess(const FolderState::Dir& a, const FolderState::Dir& b) {
  return a.key.bytes < b.key.bytes;
}
bool BlobLess(const KnownBlob& a, const KnownBlob& b) {
  return a.type != b.type ? a.type < b.type : a.id.bytes < b.id.bytes;
}

}  // namespace

const FolderState::Dir* FolderState::Find(const RawId& key) const {
  auto it = std::lower_bound(dirs.begin(), dirs.end(), key,
                             [](const Dir& d, const RawId& k) { return d.key.bytes < k.bytes; });
  return it == dirs.end() || it->key.bytes != key.bytes ? nullptr : &*it;
}

void FolderState::SortDirs() {
  std::stable_sort(dirs.begin(), dirs.end(), KeyLess);
  dirs.erase(std::unique(dirs.begin(), dirs.end(),
                         [](const Dir& a, const Dir& b) { return a.key == b.key; }),
             dirs.end());
  std::stable_sort(blobs.begin(), blobs.end(), BlobLess);
  blobs.erase(std::unique(blobs.begin(), blobs.end(),
                          [](const KnownBlob& a, const KnownBlob& b) {
                            return a.type == b.type && a.id == b.id;
                          }),
              blobs.end());
}

bool FolderState::IndexFilesRemain(std::vector<FileId> now) const {
  std::sort(now.begin(), now.end());
  return std::includes(now.begin(), now.end(), index_files.begin(), index_files.end());
}

Bytes EncodeFolderState(const FolderState& s) {
  size_t size = kHeader + s.index_files.size() * 32 + 8 + s.dirs.size() * kRecord + 8 +
                s.blobs.size() * kBlobRecord;
  for (const auto& d : s.dirs) size += d.subtrees.size() * 32;
  Bytes out(size);
  uint8_t* p = out.data();
  std::memcpy(p, kMagic, 8);
  p = PutRaw(p + 8, s.context);
  p = PutRaw(p, s.snapshot);
  p = PutRaw(p, s.tree);
  p = PutU64(p, s.index_files.size());
  for (const auto& f : s.index_files) p = PutRaw(p, f);
  p = PutU64(p, s.dirs.size());
  for (const auto& d : s.dirs) {
    p = PutU64(PutRaw(PutRaw(p, d.key), d.tree), d.subtrees.size());
    for (const auto& t : d.subtrees) p = PutRaw(p, t);
  }
  p = PutU64(p, s.blobs.size());
  for (const auto& b : s.blobs) {
    *p++ = static_cast<uint8_t>(b.type);
    p = PutRaw(PutRaw(p, b.id), b.where.pack);
    p = PutU32(PutU32(PutU32(p, b.where.offset), b.where.length), b.where.uncompressed_length);
  }
  return out;
}

std::optional<FolderState> ParseFolderState(ByteView plain) {
  if (plain.size() < kHeader || std::memcmp(plain.data(), kMagic, 8) != 0) return std::nullopt;
  FolderState s;
  s.context = GetRaw(plain.data() + 8);
  s.snapshot = FileId(GetRaw(plain.data() + 40));
  s.tree = BlobId(GetRaw(plain.data() + 72));
  size_t at = 104;
  const uint64_t files = GetU64(plain.data() + at);
  at += 8;
  if (files > (plain.size() - at) / 32 || plain.size() - at - files * 32 < 8) return std::nullopt;
  s.index_files.reserve(files);
  for (uint64_t i = 0; i < files; ++i, at += 32) {
    FileId f(GetRaw(plain.data() + at));
    if (!s.index_files.empty() && !(s.index_files.back() < f)) return std::nullopt;
    s.index_files.push_back(f);
  }
  const uint64_t n = GetU64(plain.data() + at);
  at += 8;
  if (n > (plain.size() - at) / kRecord) return std::nullopt;
  s.dirs.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (plain.size() - at < kRecord) return std::nullopt;
    const uint8_t* p = plain.data() + at;
    FolderState::Dir d{GetRaw(p), BlobId(GetRaw(p + 32)), {}};
    const uint64_t subs = GetU64(p + 64);
    at += kRecord;
    if (subs > (plain.size() - at) / 32) return std::nullopt;
    d.subtrees.reserve(subs);
    for (uint64_t j = 0; j < subs; ++j, at += 32) d.subtrees.emplace_back(GetRaw(plain.data() + at));
    if (!s.dirs.empty() && !KeyLess(s.dirs.back(), d)) return std::nullopt;  // order, unique
    s.dirs.push_back(std::move(d));
  }
  if (plain.size() - at < 8) return std::nullopt;
  const uint64_t blobs = GetU64(plain.data() + at);
  at += 8;
  if (blobs != (plain.size() - at) / kBlobRecord || (plain.size() - at) % kBlobRecord != 0)
    return std::nullopt;  // (also: nothing after the last blob)
  s.blobs.reserve(blobs);
  for (uint64_t i = 0; i < blobs; ++i, at += kBlobRecord) {
    const uint8_t* p = plain.data() + at;
    if (p[0] > static_cast<uint8_t>(BlobType::kTree)) return std::nullopt;
    KnownBlob b{static_cast<BlobType>(p[0]), BlobId(GetRaw(p + 1)),
                BlobLocation{PackId(GetRaw(p + 33)), GetU32(p + 65), GetU32(p + 69),
                             GetU32(p + 73)}};
    if (b.where.length < crypto::kOverhead) return std::nullopt;  // (IV and MAC)
    if (!s.blobs.empty() && !BlobLess(s.blobs.back(), b)) return std::nullopt;  // order, unique
    s.blobs.push_back(b);
  }
  return s;
}

std::string FolderStatePath(const std::string& dir, std::string_view kind,
                            const std::vector<std::string>& who) {
  std::string joined;
  for (size_t i = 0; i < who.size(); ++i) {
    if (i) joined += '\0';
    joined += who[i];
  }
  return dir + "/" + std::string(kind) + "-" + Sha256(AsBytes(joined)).Hex().substr(0, 16);
}

std::optional<FolderState> LoadFolderState(Repository& repo, const std::string& path) {
  posix::Fd fd(posix::OpenNoIntr(path, O_RDONLY | O_NOFOLLOW));
  if (fd.get() < 0) return std::nullopt;
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (int64_t{1} << 30))
    return std::nullopt;
  Bytes sealed(static_cast<size_t>(st.st_size));
  if (posix::ReadAt(fd.get(), sealed.data(), sealed.size(), 0) != 0) return std::nullopt;
  try {
    std::string plain = repo.DecodeUnpacked(sealed, path);
    return ParseFolderState(AsBytes(plain));
  } catch (const Error&) {
    return std::nullopt;  // another repository's key, or damaged: not trusted
  }
}

void SaveFolderState(Repository& repo, const std::string& path, const FolderState& s) {
  const Bytes plain = EncodeFolderState(s);
  const Bytes sealed =
      repo.EncodeJson(std::string_view(reinterpret_cast<const char*>(plain.data()), plain.size()));
  const std::filesystem::path file(path);
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  const std::string tmp = path + "-tmp-" + posix::RandomSuffix();
  posix::Fd fd(posix::OpenNoIntr(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
  if (fd.get() < 0) Fail(ErrorCode::kIo, "create " + tmp + ": " + strerror(errno));
  // No fsync: a state cut short by a crash fails its MAC at the next load and is ignored.
  int err = posix::WriteAll(fd.get(), sealed);
  if (err == 0 && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    Fail(ErrorCode::kIo, "write " + path + ": " + strerror(err));
  }
}

std::optional<FolderState> LoadUsableFolderState(Repository& repo, const std::string& path,
                                                 const RawId& context, const FileId& parent,
                                                 const std::optional<BlobId>& parent_tree,
                                                 const std::vector<FileId>& index_files) {
  std::optional<FolderState> s = LoadFolderState(repo, path);
  if (!s) return s;
  const bool same_tree = !s->tree.IsZero() && parent_tree && *parent_tree == s->tree;
  if (s->context != context || (s->snapshot != parent && !same_tree) ||
      !s->IndexFilesRemain(index_files))
    s.reset();
  return s;
}

void SaveNextFolderState(Repository& repo, const std::string& path,
                         const std::optional<FolderState>& read, FolderState next,
                         std::vector<FileId> index_files) {
  std::sort(index_files.begin(), index_files.end());
  next.index_files = std::move(index_files);
  next.SortDirs();
  if (read && !read->tree.IsZero() && read->tree == next.tree) {
    // Same root tree: nothing new to say if the rest is the same (compared in place).
    const FileId named = std::exchange(next.snapshot, read->snapshot);
    if (next == *read) return;
    next.snapshot = named;
  }
  SaveFolderState(repo, path, next);
}

RawId FolderContext(std::string_view version, const std::vector<std::string>& parts) {
  Sha256Stream h;
  auto add = [&](std::string_view s) {
    h.Update(AsBytes(s));
    h.Update(AsBytes(std::string_view("\0", 1)));
  };
  add(version);
  for (const auto& p : parts) add(p);
  add("tz");
  const char* tz = std::getenv("TZ");
  add(tz ? tz : "(unset)");
  struct stat st;  // the zone rules behind every encoded time's offset
  if (stat("/etc/localtime", &st) == 0) {
    add(std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
        std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
        std::to_string(st.st_mtim.tv_nsec));
  }
  return h.Finish();
}

DirKey::DirKey(const RawId& context) { h_.Update(context.bytes); }

// The bytes of each entry are gathered and hashed in pieces of a few KiB (one SHA-256
// update per entry cost more than the entry's fstatat in a 200,000-file backup).
void DirKey::AddEntry(std::string_view name, const struct stat& st) {
  buf_.append(name);
  buf_.push_back('\0');
  const uint64_t fields[] = {
      st.st_mode,
      st.st_uid,
      st.st_gid,
      static_cast<uint64_t>(st.st_size),
      static_cast<uint64_t>(st.st_mtim.tv_sec),
      static_cast<uint64_t>(st.st_mtim.tv_nsec),
      static_cast<uint64_t>(st.st_ctim.tv_sec),
      static_cast<uint64_t>(st.st_ctim.tv_nsec),
      st.st_ino,
      st.st_dev,
      st.st_nlink,
      st.st_rdev,
  };
  char le[sizeof fields];
  for (size_t f = 0; f < std::size(fields); ++f)
    for (int i = 0; i < 8; ++i) le[f * 8 + i] = static_cast<char>(fields[f] >> (8 * i));
  buf_.append(le, sizeof le);
  // The names the node records for the owner (a renamed user changes no file's stat).
  if (st.st_uid != last_uid_ || user_.empty()) {
    last_uid_ = st.st_uid;
    user_ = UserNameOf(st.st_uid);
    user_.push_back('\0');
  }
  if (st.st_gid != last_gid_ || group_.empty()) {
    last_gid_ = st.st_gid;
    group_ = GroupNameOf(st.st_gid);
    group_.push_back('\0');
  }
  buf_ += user_;
  buf_ += group_;
  if (buf_.size() >= kFlushAt) Flush();
}

void DirKey::Flush() {
  h_.Update(AsBytes(buf_));
  buf_.clear();
}

void DirKey::AddSubdirKey(const RawId& key) {
  static constexpr char kSub[] = "subdir:";
  buf_.append(kSub, sizeof kSub - 1);
  buf_.append(reinterpret_cast<const char*>(key.bytes.data()), key.bytes.size());
}

RawId DirKey::Finish() {
  Flush();
  return h_.Finish();
}

}  // namespace haven
