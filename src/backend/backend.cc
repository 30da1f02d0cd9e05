#include "backend/backend.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/sha256.h"

namespace haven {

void Backend::LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) {
  if (out.empty()) return;  // Load's length 0 would mean "to the end"
  Bytes b = Load(h, offset, out.size());
  if (b.size() != out.size()) FailShortRead(h, offset, out.size(), b.size());
  std::memcpy(out.data(), b.data(), b.size());
}

void Backend::SaveFrom(const Handle& h, const SaveSource& src) {
  Bytes all(src.size);
  if (src.size) src.read(0, all);
  Save(h, all);
}

std::string Sha256Hex(const SaveSource& src) {
  Sha256Stream hash;
  Bytes piece(std::min<uint64_t>(src.size, 1 << 20));
  for (uint64_t at = 0; at < src.size;) {
    std::span<uint8_t> part(piece.data(), static_cast<size_t>(std::min<uint64_t>(piece.size(), src.size - at)));
    src.read(at, part);
    hash.Update(part);
    at += part.size();
  }
  return hash.Finish().Hex();
}

void Backend::LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                         const std::function<void(ByteView)>& sink) {
  if (length == 0) return;
  Bytes b = Load(h, offset, length);
  if (b.size() != length) FailShortRead(h, offset, length, b.size());
  sink(b);
}

void FailShortRead(const Handle& h, uint64_t offset, uint64_t want, uint64_t got) {
  Fail(ErrorCode::kCorrupt, "short read of " + h.ToString() + ": expected " + std::to_string(want) +
                                " bytes at offset " + std::to_string(offset) + ", got " +
                                std::to_string(got));
}

const char* FileTypeDir(FileType t) {
  switch (t) {
    case FileType::kConfig:
      return "";
    case FileType::kKey:
      return "keys";
    case FileType::kLock:
      return "locks";
    case FileType::kSnapshot:
      return "snapshots";
    case FileType::kIndex:
      return "index";
    case FileType::kPack:
      return "data";
  }
  return "";
}

const char* FileTypeName(FileType t) {
  switch (t) {
    case FileType::kConfig:
      return "config";
    case FileType::kKey:
      return "key";
    case FileType::kLock:
      return "lock";
    case FileType::kSnapshot:
      return "snapshot";
    case FileType::kIndex:
      return "index";
    case FileType::kPack:
      return "pack";
  }
  return "unknown";
}

std::string Handle::ToString() const {
  if (type == FileType::kConfig) return "config";
  std::string out = FileTypeDir(type);
  out += '/';
  if (type == FileType::kPack && name.size() >= 2) {
    out.append(name, 0, 2);
    out += '/';
  }
  out += name;
  return out;
}

bool IsValidObjectName(std::string_view name) {
  if (name.size() != 64) return false;
  for (char c : name) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

void CheckHandle(const Handle& h) {
  if (h.type == FileType::kConfig) {
    if (h.name.empty() || h.name == "config") return;
    Fail(ErrorCode::kInvalidArgument, "invalid config name \"" + h.name + "\"");
  }
  if (!IsValidObjectName(h.name)) {
    Fail(ErrorCode::kInvalidArgument, std::string("invalid ") + FileTypeName(h.type) + " name \"" +
                                          h.name + "\" (want 64 lowercase hex)");
  }
}

}  // namespace haven
