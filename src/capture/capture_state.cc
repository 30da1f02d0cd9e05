#include "capture/capture_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "backend/posix_io.h"
#include "core/error.h"
#include "repo/host_info.h"

namespace haven::capture {

namespace {

constexpr char kMagic[8] = {'H', 'V', 'C', 'S', 'T', '0', '0', '2'};
constexpr size_t kHeader = 8 + 32 + 32 + 8;  // up to the index file count
constexpr size_t kRecord = 32 + 32;
// Bumped with any change to what a key covers or how trees are encoded from it.
constexpr const char* kKeyVersion = "haven-capture-dir-key/1";

// The writers fill a buffer sized once (g++ 12 flags inserts into a growing vector with
// false -Wstringop-overflow warnings).
uint8_t* PutU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) *p++ = static_cast<uint8_t>(v >> (8 * i));
  return p;
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
bool KeyLess(const CaptureState::Dir& a, const CaptureState::Dir& b) {
  return a.key.bytes < b.key.bytes;
}

}  // namespace

std::optional<BlobId> CaptureState::Find(const RawId& key) const {
  CaptureState::Dir probe{key, {}};
  auto it = std::lower_bound(dirs.begin(), dirs.end(), probe, KeyLess);
  if (it == dirs.end() || it->key.bytes != key.bytes) return std::nullopt;
  return it->tree;
}

void CaptureState::SortDirs() {
  std::stable_sort(dirs.begin(), dirs.end(), KeyLess);
  dirs.erase(std::unique(dirs.begin(), dirs.end(),
                         [](const Dir& a, const Dir& b) { return a.key == b.key; }),
             dirs.end());
}

Bytes EncodeCaptureState(const CaptureState& s) {
  Bytes out(kHeader + s.index_files.size() * 32 + 8 + s.dirs.size() * kRecord);
  uint8_t* p = out.data();
  std::memcpy(p, kMagic, 8);
  p = PutRaw(p + 8, s.context);
  p = PutRaw(p, s.snapshot);
  p = PutU64(p, s.index_files.size());
  for (const auto& f : s.index_files) p = PutRaw(p, f);
  p = PutU64(p, s.dirs.size());
  for (const auto& d : s.dirs) p = PutRaw(PutRaw(p, d.key), d.tree);
  return out;
}

std::optional<CaptureState> ParseCaptureState(ByteView plain) {
  if (plain.size() < kHeader || std::memcmp(plain.data(), kMagic, 8) != 0) return std::nullopt;
  CaptureState s;
  s.context = GetRaw(plain.data() + 8);
  s.snapshot = FileId(GetRaw(plain.data() + 40));
  size_t at = 72;
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
  if (n > (plain.size() - at) / kRecord || plain.size() != at + n * kRecord) return std::nullopt;
  s.dirs.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t* p = plain.data() + at + i * kRecord;
    CaptureState::Dir d{GetRaw(p), BlobId(GetRaw(p + 32))};
    if (!s.dirs.empty() && !KeyLess(s.dirs.back(), d)) return std::nullopt;  // order, unique
    s.dirs.push_back(d);
  }
  return s;
}

std::string CaptureStatePath(const std::string& dir, const std::string& host,
                             const std::string& home, const std::string& profile_name) {
  std::string who = host + '\0' + home + '\0' + profile_name;
  return dir + "/capture-" + Sha256(AsBytes(who)).Hex().substr(0, 16);
}

std::optional<CaptureState> LoadCaptureState(Repository& repo, const std::string& path) {
  posix::Fd fd(posix::OpenNoIntr(path, O_RDONLY | O_NOFOLLOW));
  if (fd.get() < 0) return std::nullopt;
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (int64_t{1} << 30))
    return std::nullopt;
  Bytes sealed(static_cast<size_t>(st.st_size));
  if (posix::ReadAt(fd.get(), sealed.data(), sealed.size(), 0) != 0) return std::nullopt;
  try {
    std::string plain = repo.DecodeUnpacked(sealed, path);
    return ParseCaptureState(AsBytes(plain));
  } catch (const Error&) {
    return std::nullopt;  // another repository's key, or damaged: not trusted
  }
}

void SaveCaptureState(Repository& repo, const std::string& path, const CaptureState& s) {
  const Bytes plain = EncodeCaptureState(s);
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

RawId ContextDigest(const std::string& scan_tag, const std::vector<std::string>& excludes) {
  Sha256Stream h;
  auto add = [&](std::string_view s) {
    h.Update(AsBytes(s));
    h.Update(AsBytes(std::string_view("\0", 1)));
  };
  add(kKeyVersion);
  add(scan_tag);
  for (const auto& e : excludes) add(e);
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

void DirKey::AddEntry(const std::string& name, const struct stat& st) {
  buf_.assign(name);
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
  for (uint64_t v : fields)
    for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<char>(v >> (8 * i)));
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
  h_.Update(AsBytes(buf_));
}

void DirKey::AddSubdirKey(const RawId& key) {
  static constexpr char kSub[] = "subdir:";
  h_.Update(AsBytes(std::string_view(kSub, sizeof kSub - 1)));
  h_.Update(key.bytes);
}

RawId DirKey::Finish() { return h_.Finish(); }

}  // namespace haven::capture
