#include "repo/node.h"

#include <simdjson.h>
#include <sys/stat.h>

#include <tuple>

#include "core/error.h"

namespace haven {

const char* NodeTypeName(NodeType t) {
  switch (t) {
    case NodeType::kFile: return "file";
    case NodeType::kDir: return "dir";
    case NodeType::kSymlink: return "symlink";
    case NodeType::kDev: return "dev";
    case NodeType::kCharDev: return "chardev";
    case NodeType::kFifo: return "fifo";
    case NodeType::kSocket: return "socket";
    case NodeType::kIrregular: return "irregular";
  }
  return "irregular";
}

std::optional<NodeType> ParseNodeType(std::string_view s) {
  static const std::pair<const char*, NodeType> kTypes[] = {
      {"file", NodeType::kFile},       {"dir", NodeType::kDir},
      {"symlink", NodeType::kSymlink}, {"dev", NodeType::kDev},
      {"chardev", NodeType::kCharDev}, {"fifo", NodeType::kFifo},
      {"socket", NodeType::kSocket},   {"irregular", NodeType::kIrregular}};
  for (const auto& [name, t] : kTypes)
    if (s == name) return t;
  return std::nullopt;
}

uint32_t GoModeFromPosix(mode_t m) {
  uint32_t g = m & 0777;
  switch (m & S_IFMT) {
    case S_IFDIR: g |= gomode::kDir; break;
    case S_IFLNK: g |= gomode::kSymlink; break;
    case S_IFBLK: g |= gomode::kDevice; break;
    case S_IFCHR: g |= gomode::kDevice | gomode::kCharDevice; break;
    case S_IFIFO: g |= gomode::kNamedPipe; break;
    case S_IFSOCK: g |= gomode::kSocket; break;
    default: break;
  }
  if (m & S_ISUID) g |= gomode::kSetuid;
  if (m & S_ISGID) g |= gomode::kSetgid;
  if (m & S_ISVTX) g |= gomode::kSticky;
  return g;
}

mode_t PosixPermFromGoMode(uint32_t g) {
  mode_t m = g & 0777;
  if (g & gomode::kSetuid) m |= S_ISUID;
  if (g & gomode::kSetgid) m |= S_ISGID;
  if (g & gomode::kSticky) m |= S_ISVTX;
  return m;
}

namespace {

void AppendUint(std::string& out, const char* key, uint64_t v) {
  out += ",\"";
  out += key;
  out += "\":";
  out += std::to_string(v);
}

void AppendTimeField(std::string& out, const char* key, const gojson::Timestamp& t) {
  out += ",\"";
  out += key;
  out += "\":\"";
  gojson::AppendTime(out, t);
  out += '"';
}

}  // namespace

void AppendNodeJson(std::string& out, const Node& n) {
  out += "{\"name\":";
  gojson::AppendNameString(out, n.name);
  out += ",\"type\":\"";
  out += NodeTypeName(n.type);
  out += '"';
  if (n.mode) AppendUint(out, "mode", n.mode);
  AppendTimeField(out, "mtime", n.mtime);
  AppendTimeField(out, "atime", n.atime);
  AppendTimeField(out, "ctime", n.ctime);
  AppendUint(out, "uid", n.uid);
  AppendUint(out, "gid", n.gid);
  if (!n.user.empty()) {
    out += ",\"user\":";
    gojson::AppendString(out, n.user);
  }
  if (!n.group.empty()) {
    out += ",\"group\":";
    gojson::AppendString(out, n.group);
  }
  if (n.inode) AppendUint(out, "inode", n.inode);
  if (n.device_id) AppendUint(out, "device_id", n.device_id);
  if (n.size) AppendUint(out, "size", n.size);
  if (n.links) AppendUint(out, "links", n.links);
  if (!n.linktarget.empty()) {
    out += ",\"linktarget\":";
    gojson::AppendString(out, n.linktarget);
    if (!gojson::IsValidUtf8(n.linktarget)) {
      out += ",\"linktarget_raw\":\"";
      out += Base64Encode(AsBytes(n.linktarget));
      out += '"';
    }
  }
  if (!n.xattrs.empty()) {
    out += ",\"extended_attributes\":[";
    for (size_t i = 0; i < n.xattrs.size(); ++i) {
      if (i) out += ',';
      out += "{\"name\":";
      gojson::AppendString(out, n.xattrs[i].name);
      out += ",\"value\":";
      if (n.xattrs[i].value) {
        out += '"';
        out += Base64Encode(AsBytes(*n.xattrs[i].value));
        out += '"';
      } else {
        out += "null";
      }
      out += '}';
    }
    out += ']';
  }
  if (!n.generic_attributes.empty()) {
    out += ",\"generic_attributes\":";
    out += n.generic_attributes;
  }
  if (n.device) AppendUint(out, "device", n.device);
  out += ",\"content\":";
  if (n.type == NodeType::kFile) {
    out += '[';
    for (size_t i = 0; i < n.content.size(); ++i) {
      if (i) out += ',';
      out += '"';
      out += n.content[i].Hex();
      out += '"';
    }
    out += ']';
  } else {
    out += "null";
  }
  if (n.subtree) {
    out += ",\"subtree\":\"";
    out += n.subtree->Hex();
    out += '"';
  }
  if (!n.error.empty()) {
    out += ",\"error\":";
    gojson::AppendString(out, n.error);
  }
  out += '}';
}

bool SafeNodeName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

std::string EncodeTree(const std::vector<Node>& nodes) {
  std::string out = "{\"nodes\":[";
  out.reserve(nodes.size() * 400 + 16);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i) {
      if (!(nodes[i - 1].name < nodes[i].name))
        Fail(ErrorCode::kFatal, "tree nodes not sorted or duplicate name \"" +
                                    gojson::QuoteName(nodes[i].name) + "\"");
      out += ',';
    }
    AppendNodeJson(out, nodes[i]);
  }
  out += "]}\n";
  return out;
}

namespace {

// The node fields DecodeTree reads. One pass over a node object collects the first
// value of each (what a lookup by key returns), instead of ~20 lookups that each scan
// the object's keys.
enum Field {
  kName, kType, kMode, kMtime, kAtime, kCtime, kUid, kGid, kUser, kGroup, kInode,
  kDeviceId, kSize, kLinks, kDevice, kLinktarget, kLinktargetRaw, kXattrs, kGeneric,
  kContent, kSubtree, kError, kFieldCount
};

int FieldOf(std::string_view k) {
  switch (k.size()) {
    case 3:
      if (k == "uid") return kUid;
      if (k == "gid") return kGid;
      break;
    case 4:
      if (k == "name") return kName;
      if (k == "type") return kType;
      if (k == "mode") return kMode;
      if (k == "user") return kUser;
      if (k == "size") return kSize;
      break;
    case 5:
      if (k == "mtime") return kMtime;
      if (k == "atime") return kAtime;
      if (k == "ctime") return kCtime;
      if (k == "group") return kGroup;
      if (k == "inode") return kInode;
      if (k == "links") return kLinks;
      if (k == "error") return kError;
      break;
    case 6:
      if (k == "device") return kDevice;
      break;
    case 7:
      if (k == "content") return kContent;
      if (k == "subtree") return kSubtree;
      break;
    case 9:
      if (k == "device_id") return kDeviceId;
      break;
    case 10:
      if (k == "linktarget") return kLinktarget;
      break;
    case 14:
      if (k == "linktarget_raw") return kLinktargetRaw;
      break;
    case 18:
      if (k == "generic_attributes") return kGeneric;
      break;
    case 19:
      if (k == "extended_attributes") return kXattrs;
      break;
    default: break;
  }
  return -1;
}

// A node's fields by Field; absent ones give NO_SUCH_FIELD, as obj[key] does.
class NodeFields {
 public:
  explicit NodeFields(simdjson::dom::object obj) {
    for (auto f : obj) {
      int i = FieldOf(f.key);
      if (i >= 0 && !(seen_ & (1u << i))) {
        seen_ |= 1u << i;
        v_[i] = f.value;
      }
    }
  }
  simdjson::simdjson_result<simdjson::dom::element> operator[](Field f) const {
    if (!(seen_ & (1u << f))) return simdjson::NO_SUCH_FIELD;
    return simdjson::dom::element(v_[f]);
  }

 private:
  uint32_t seen_ = 0;
  simdjson::dom::element v_[kFieldCount];
};

uint64_t U(const NodeFields& obj, Field key) {
  uint64_t v = 0;
  auto f = obj[key];
  if (f.error()) return 0;
  if (f.get(v)) {
    int64_t sv;
    if (!f.get(sv)) return static_cast<uint64_t>(sv);
    return 0;
  }
  return v;
}

}  // namespace

std::vector<Node> DecodeTree(std::string_view json, std::string_view what) {
  const std::string where = "tree " + std::string(what);
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (json.empty() || parser.parse(json.data(), json.size()).get(doc))
    Fail(ErrorCode::kCorrupt, where + ": invalid JSON");
  simdjson::dom::array nodes;
  std::vector<Node> out;
  auto nf = doc["nodes"];
  if (nf.error() || nf.is_null()) return out;
  if (nf.get(nodes)) Fail(ErrorCode::kCorrupt, where + ": \"nodes\" is not an array");
  out.reserve(nodes.size());
  for (simdjson::dom::element elem : nodes) {
    Node n;
    std::string_view sv;
    simdjson::dom::object obj;
    if (elem.get(obj)) Fail(ErrorCode::kCorrupt, where + ": node without name");
    const NodeFields ne(obj);
    if (ne[kName].get(sv)) Fail(ErrorCode::kCorrupt, where + ": node without name");
    auto name = gojson::UnquoteName(sv);
    if (!name) Fail(ErrorCode::kCorrupt, where + ": invalid node name \"" + std::string(sv) + "\"");
    n.name = std::move(*name);
    if (ne[kType].get(sv)) Fail(ErrorCode::kCorrupt, where + ": node without type");
    auto t = ParseNodeType(sv);
    if (!t) Fail(ErrorCode::kCorrupt, where + ": unknown node type \"" + std::string(sv) + "\"");
    n.type = *t;
    n.mode = static_cast<uint32_t>(U(ne, kMode));
    for (auto [key, field, dst] : {std::tuple{"mtime", kMtime, &n.mtime},
                                   std::tuple{"atime", kAtime, &n.atime},
                                   std::tuple{"ctime", kCtime, &n.ctime}}) {
      if (!ne[field].get(sv)) {
        auto ts = gojson::ParseTime(sv);
        if (!ts) Fail(ErrorCode::kCorrupt, where + ": invalid " + key + " \"" + std::string(sv) + "\"");
        *dst = *ts;
      }
    }
    n.uid = static_cast<uint32_t>(U(ne, kUid));
    n.gid = static_cast<uint32_t>(U(ne, kGid));
    if (!ne[kUser].get(sv)) n.user = sv;
    if (!ne[kGroup].get(sv)) n.group = sv;
    n.inode = U(ne, kInode);
    n.device_id = U(ne, kDeviceId);
    n.size = U(ne, kSize);
    n.links = U(ne, kLinks);
    n.device = U(ne, kDevice);
    if (!ne[kLinktarget].get(sv)) n.linktarget = sv;
    if (!ne[kLinktargetRaw].get(sv)) {
      auto raw = Base64Decode(sv);
      if (!raw) Fail(ErrorCode::kCorrupt, where + ": invalid linktarget_raw");
      n.linktarget.assign(raw->begin(), raw->end());
    }
    simdjson::dom::array xa;
    if (!ne[kXattrs].get(xa)) {
      for (simdjson::dom::element x : xa) {
        Xattr a;
        if (x["name"].get(sv)) Fail(ErrorCode::kCorrupt, where + ": xattr without name");
        a.name = sv;
        if (!x["value"].get(sv)) {
          auto v = Base64Decode(sv);
          if (!v) Fail(ErrorCode::kCorrupt, where + ": invalid xattr value");
          a.value = std::string(v->begin(), v->end());
        }
        n.xattrs.push_back(std::move(a));
      }
    }
    simdjson::dom::object ga;
    if (!ne[kGeneric].get(ga)) n.generic_attributes = simdjson::minify(ga);
    simdjson::dom::array content;
    if (!ne[kContent].get(content)) {
      n.content.reserve(content.size());
      for (simdjson::dom::element c : content) {
        if (c.get(sv)) Fail(ErrorCode::kCorrupt, where + ": invalid content id");
        auto id = BlobId::FromHex(sv);
        if (!id) Fail(ErrorCode::kCorrupt, where + ": invalid content id \"" + std::string(sv) + "\"");
        n.content.push_back(*id);
      }
    }
    if (!ne[kSubtree].get(sv)) {
      auto id = BlobId::FromHex(sv);
      if (!id) Fail(ErrorCode::kCorrupt, where + ": invalid subtree id");
      n.subtree = *id;
    }
    if (!ne[kError].get(sv)) n.error = sv;
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace haven
