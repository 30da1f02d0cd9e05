// Trees and nodes (docs/format.md §10). A tree blob is {"nodes":[...]}\n with nodes sorted by
// raw name bytes; its id is the SHA-256 of exactly these bytes, so EncodeTree reproduces
// restic's Go encoding byte for byte (field order, omitted fields, name quoting, times).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/id.h"
#include "repo/gojson.h"

namespace haven {

enum class NodeType { kFile, kDir, kSymlink, kDev, kCharDev, kFifo, kSocket, kIrregular };
const char* NodeTypeName(NodeType t);
std::optional<NodeType> ParseNodeType(std::string_view s);

// Go fs.FileMode bits (docs/format.md §10.6).
namespace gomode {
constexpr uint32_t kDir = 1u << 31, kSymlink = 1u << 27, kDevice = 1u << 26,
                   kNamedPipe = 1u << 25, kSocket = 1u << 24, kSetuid = 1u << 23,
                   kSetgid = 1u << 22, kCharDevice = 1u << 21, kSticky = 1u << 20,
                   kIrregular = 1u << 19, kPerm = 0777;
}
uint32_t GoModeFromPosix(mode_t m);
// Permission bits plus setuid/setgid/sticky as POSIX bits (type bits dropped).
mode_t PosixPermFromGoMode(uint32_t go_mode);

struct Xattr {
  std::string name;
  std::optional<std::string> value;  // nullopt encodes as null
};

struct Node {
  std::string name;  // raw bytes
  NodeType type = NodeType::kFile;
  uint32_t mode = 0;  // Go FileMode
  gojson::Timestamp mtime, atime, ctime;
  uint32_t uid = 0, gid = 0;
  std::string user, group;
  uint64_t inode = 0, device_id = 0, size = 0, links = 0;
  std::string linktarget;  // raw bytes
  std::vector<Xattr> xattrs;
  std::string generic_attributes;  // raw JSON object text, preserved; "" when absent
  uint64_t device = 0;
  std::vector<BlobId> content;  // files only
  std::optional<BlobId> subtree;
  std::string error;
};

// Appends one node's JSON exactly as restic 0.14 marshals it.
void AppendNodeJson(std::string& out, const Node& n);
// Tree bytes for nodes that are already sorted by name (checked; throws kFatal on
// unsorted or duplicate names).
std::string EncodeTree(const std::vector<Node>& nodes);
// True when `nodes` (a decoded tree) encode back to exactly the bytes of tree `id`:
// nothing the tree held is lost by writing a changed copy of it (rewrite, copy's re-chunk).
// False also for nodes EncodeTree refuses (unsorted or repeated names).
bool EncodesBackTo(const std::vector<Node>& nodes, const BlobId& id);
// A node name that stays inside its directory when joined to a path: not empty, not "."
// or "..", no '/' and no NUL (restore and apply refuse any other).
bool SafeNodeName(std::string_view name);
// Parses a tree blob; throws kCorrupt naming `what` on invalid content. `capacity`: how
// many bytes at json.data() may be read (json.size() plus zero padding); with at least
// 64 bytes of padding the JSON is parsed in place, otherwise it is copied first. Fields
// are read in one pass (simdjson's on-demand parser: no document tree is built, so a
// directory of a million entries needs about half the memory a DOM parse did).
std::vector<Node> DecodeTree(std::string_view json, std::string_view what, size_t capacity = 0);

}  // namespace haven
