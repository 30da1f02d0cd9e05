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

bool EncodesBackTo(const std::vector<Node>& nodes, const BlobId& id) {
  std::string bytes;
  try {
    bytes = EncodeTree(nodes);
  } catch (const Error&) {
    return false;
  }
  return BlobId(Sha256(AsBytes(bytes))) == id;
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

namespace od = simdjson::ondemand;

[[noreturn]] void Corrupt(const std::string& where, const std::string& what) {
  Fail(ErrorCode::kCorrupt, where + ": " + what);
}

// Throws kCorrupt for a simdjson error (malformed JSON found while reading).
template <typename T>
T Must(simdjson::simdjson_result<T> r, const std::string& where) {
  T v;
  if (std::move(r).get(v)) Corrupt(where, "invalid JSON");
  return v;
}

// The on-demand parser types a value by its first byte; a literal of the wrong type is
// still read in full, so "tru" or "nul" is invalid JSON as it was for the DOM parser.
template <typename V>
void CheckLiteral(V& v, od::json_type t, const std::string& where) {
  if (t == od::json_type::boolean) {
    Must(v.get_bool(), where);
  } else if (t == od::json_type::null) {
    if (!Must(v.is_null(), where)) Corrupt(where, "invalid JSON");
  } else if (t == od::json_type::number) {
    Must(v.get_number(), where);
  }
}

// A string value, or nullopt when the value has another type (such a field is left at
// its zero value, as restic's decoder does).
std::optional<std::string_view> StringOf(od::value& v, const std::string& where) {
  const od::json_type t = Must(v.type(), where);
  if (t == od::json_type::string) return Must(v.get_string(), where);
  CheckLiteral(v, t, where);
  return std::nullopt;
}

// An integer: unsigned, or signed (kept as its two's complement); a fraction, a string or
// null counts as 0. An integer past 64 bits is invalid.
uint64_t IntegerOf(od::value& v, const std::string& where) {
  const od::json_type t = Must(v.type(), where);
  if (t != od::json_type::number) {
    if (t == od::json_type::string) Must(v.get_string(), where);
    CheckLiteral(v, t, where);
    return 0;
  }
  switch (Must(v.get_number_type(), where)) {
    case od::number_type::unsigned_integer: return Must(v.get_uint64(), where);
    case od::number_type::signed_integer:
      return static_cast<uint64_t>(Must(v.get_int64(), where));
    case od::number_type::floating_point_number:
      Must(v.get_double(), where);
      return 0;
    default: Corrupt(where, "invalid JSON");  // too large for 64 bits
  }
}

Xattr ReadXattr(od::value item, const std::string& where) {
  od::object obj;
  if (item.get_object().get(obj)) Corrupt(where, "xattr without name");
  Xattr a;
  bool seen_name = false, seen_value = false, has_name = false;
  for (auto field : obj) {
    od::field f = Must(std::move(field), where);
    const std::string_view key = Must(f.unescaped_key(), where);
    od::value v = f.value();
    if (key == "name" && !seen_name) {
      seen_name = true;
      if (auto sv = StringOf(v, where)) a.name = *sv, has_name = true;
    } else if (key == "value" && !seen_value) {
      seen_value = true;
      if (auto sv = StringOf(v, where)) {
        auto raw = Base64Decode(*sv);
        if (!raw) Corrupt(where, "invalid xattr value");
        a.value = std::string(raw->begin(), raw->end());
      }
    }
  }
  if (!has_name) Corrupt(where, "xattr without name");
  return a;
}

// generic_attributes: the object's own text, without insignificant whitespace (as Go
// re-marshals a json.RawMessage).
std::string MinifiedObject(od::value& v, const std::string& where) {
  const std::string_view raw = Must(Must(v.get_object(), where).raw_json(), where);
  std::string out(raw.size(), '\0');
  size_t len = 0;
  if (simdjson::minify(raw.data(), raw.size(), out.data(), len)) Corrupt(where, "invalid JSON");
  out.resize(len);
  return out;
}

BlobId IdOf(od::value& v, const char* what, const std::string& where) {
  auto sv = StringOf(v, where);
  auto id = sv ? BlobId::FromHex(*sv) : std::nullopt;
  if (!id)
    Corrupt(where, std::string("invalid ") + what + (sv ? " \"" + std::string(*sv) + "\"" : ""));
  return *id;
}

// Reads one field of a node (the first occurrence of each name counts, as before).
void ReadField(int field, od::value& v, Node& n, std::optional<std::string>& raw_target,
               const std::string& where) {
  switch (field) {
    case kName:
      if (auto sv = StringOf(v, where)) {
        auto name = gojson::UnquoteName(*sv);
        if (!name) Corrupt(where, "invalid node name \"" + std::string(*sv) + "\"");
        n.name = std::move(*name);
      }
      break;
    case kType:
      if (auto sv = StringOf(v, where)) {
        auto t = ParseNodeType(*sv);
        if (!t) Corrupt(where, "unknown node type \"" + std::string(*sv) + "\"");
        n.type = *t;
      }
      break;
    case kMtime: case kAtime: case kCtime:
      if (auto sv = StringOf(v, where)) {
        const char* key = field == kMtime ? "mtime" : field == kAtime ? "atime" : "ctime";
        auto ts = gojson::ParseTime(*sv);
        if (!ts) Corrupt(where, std::string("invalid ") + key + " \"" + std::string(*sv) + "\"");
        (field == kMtime ? n.mtime : field == kAtime ? n.atime : n.ctime) = *ts;
      }
      break;
    case kMode: n.mode = static_cast<uint32_t>(IntegerOf(v, where)); break;
    case kUid: n.uid = static_cast<uint32_t>(IntegerOf(v, where)); break;
    case kGid: n.gid = static_cast<uint32_t>(IntegerOf(v, where)); break;
    case kInode: n.inode = IntegerOf(v, where); break;
    case kDeviceId: n.device_id = IntegerOf(v, where); break;
    case kSize: n.size = IntegerOf(v, where); break;
    case kLinks: n.links = IntegerOf(v, where); break;
    case kDevice: n.device = IntegerOf(v, where); break;
    case kUser: if (auto sv = StringOf(v, where)) n.user = *sv; break;
    case kGroup: if (auto sv = StringOf(v, where)) n.group = *sv; break;
    case kLinktarget: if (auto sv = StringOf(v, where)) n.linktarget = *sv; break;
    case kError: if (auto sv = StringOf(v, where)) n.error = *sv; break;
    case kLinktargetRaw:
      if (auto sv = StringOf(v, where)) {
        auto raw = Base64Decode(*sv);
        if (!raw) Corrupt(where, "invalid linktarget_raw");
        raw_target = std::string(raw->begin(), raw->end());
      }
      break;
    case kXattrs:
      if (Must(v.type(), where) == od::json_type::array)
        for (auto item : Must(v.get_array(), where))
          n.xattrs.push_back(ReadXattr(Must(std::move(item), where), where));
      break;
    case kGeneric:
      if (Must(v.type(), where) == od::json_type::object) n.generic_attributes = MinifiedObject(v, where);
      break;
    case kContent:
      if (Must(v.type(), where) == od::json_type::array)
        for (auto item : Must(v.get_array(), where)) {
          od::value c = Must(std::move(item), where);
          n.content.push_back(IdOf(c, "content id", where));
        }
      break;
    case kSubtree:
      if (Must(v.type(), where) == od::json_type::string) n.subtree = IdOf(v, "subtree id", where);
      break;
    default: break;
  }
}

Node ReadNode(od::value elem, const std::string& where) {
  od::object obj;
  if (elem.get_object().get(obj)) Corrupt(where, "node without name");
  Node n;
  uint32_t seen = 0;
  std::optional<std::string> raw_target;
  bool has_name = false, has_type = false;
  for (auto field : obj) {
    od::field f = Must(std::move(field), where);
    const int i = FieldOf(Must(f.unescaped_key(), where));
    if (i < 0 || (seen & (1u << i))) continue;
    seen |= 1u << i;
    od::value v = f.value();
    if (i == kName || i == kType) {
      if (Must(v.type(), where) != od::json_type::string) continue;
      (i == kName ? has_name : has_type) = true;
    }
    ReadField(i, v, n, raw_target, where);
  }
  if (!has_name) Corrupt(where, "node without name");
  if (!has_type) Corrupt(where, "node without type");
  if (raw_target) n.linktarget = std::move(*raw_target);  // linktarget_raw wins
  return n;
}

// Parser state per thread. A tree larger than this gives back its buffers afterwards, so
// one huge directory does not keep its peak memory for the rest of the run.
constexpr size_t kKeepParserBytes = 64 << 20;

}  // namespace

std::vector<Node> DecodeTree(std::string_view json, std::string_view what, size_t capacity) {
  const std::string where = "tree " + std::string(what);
  if (json.empty()) Corrupt(where, "invalid JSON");
  thread_local od::parser parser;
  thread_local std::string copy;  // a padded copy when the caller's buffer has no room
  simdjson::padded_string_view input(json.data(), json.size(), capacity);
  if (capacity < json.size() + simdjson::SIMDJSON_PADDING) {
    copy.reserve(json.size() + simdjson::SIMDJSON_PADDING);
    copy.assign(json);
    input = simdjson::padded_string_view(copy);
  }
  struct Release {
    size_t size;
    ~Release() {
      if (size <= kKeepParserBytes) return;
      parser = od::parser();
      std::string().swap(copy);
    }
  } release{json.size()};
  od::document doc = Must(parser.iterate(input), where);
  std::vector<Node> out;
  const od::json_type root = Must(doc.type(), where);
  if (root == od::json_type::null) {  // restic reads "null" as an empty tree
    CheckLiteral(doc, root, where);
    return out;
  }
  if (root != od::json_type::object) Corrupt(where, "invalid JSON: not an object");
  bool seen_nodes = false;
  for (auto field : Must(doc.get_object(), where)) {
    od::field f = Must(std::move(field), where);
    if (Must(f.unescaped_key(), where) != "nodes" || seen_nodes) continue;
    seen_nodes = true;
    od::value v = f.value();
    const od::json_type t = Must(v.type(), where);
    if (t == od::json_type::null) {
      CheckLiteral(v, t, where);
      continue;
    }
    if (t != od::json_type::array) Corrupt(where, "\"nodes\" is not an array");
    for (auto elem : Must(v.get_array(), where)) out.push_back(ReadNode(Must(std::move(elem), where), where));
  }
  const char* rest = nullptr;
  if (!doc.current_location().get(rest)) Corrupt(where, "invalid JSON: content after the tree");
  return out;
}

}  // namespace haven
