#include "repo/index.h"

#include <simdjson.h>

#include "core/error.h"

namespace haven {

size_t Index::Slot(BlobType type, const BlobId& id) const {
  return (id.Prefix64() ^ static_cast<uint64_t>(type)) & (table_.size() - 1);
}

void Index::Insert(uint32_t e) {
  const Entry& en = entries_[e];
  size_t s = Slot(en.type, en.id);
  while (table_[s]) s = (s + 1) & (table_.size() - 1);
  table_[s] = e + 1;
}

void Index::Grow() {
  size_t n = table_.empty() ? 1024 : table_.size() * 2;
  table_.assign(n, 0);
  for (uint32_t i = 0; i < entries_.size(); ++i) Insert(i);
}

void Index::AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs) {
  uint32_t p = static_cast<uint32_t>(packs_.size());
  packs_.push_back(pack);
  pack_first_.push_back(static_cast<uint32_t>(entries_.size()));
  if (!blobs.empty() && blobs.front().type == BlobType::kTree) tree_packs_.insert(pack);
  for (const PackedBlob& b : blobs) {
    if ((entries_.size() + 1) * 10 >= table_.size() * 7) Grow();
    entries_.push_back({b.id, p, b.offset, b.length, b.uncompressed_length, b.type});
    Insert(static_cast<uint32_t>(entries_.size() - 1));
  }
}

bool Index::Has(BlobType type, const BlobId& id) const {
  if (table_.empty()) return false;
  for (size_t s = Slot(type, id);; s = (s + 1) & (table_.size() - 1)) {
    uint32_t e = table_[s];
    if (!e) return false;
    const Entry& en = entries_[e - 1];
    if (en.type == type && en.id == id) return true;
  }
}

std::vector<BlobLocation> Index::Lookup(BlobType type, const BlobId& id) const {
  std::vector<BlobLocation> out;
  if (table_.empty()) return out;
  for (size_t s = Slot(type, id);; s = (s + 1) & (table_.size() - 1)) {
    uint32_t e = table_[s];
    if (!e) break;
    const Entry& en = entries_[e - 1];
    if (en.type == type && en.id == id)
      out.push_back({packs_[en.pack], en.offset, en.length, en.uncompressed_length});
  }
  return out;
}

bool Index::HasPack(const PackId& pack) const {
  for (const auto& p : packs_)
    if (p == pack) return true;
  return false;
}

void Index::ForEach(const std::function<void(const PackId&, const PackedBlob&)>& fn) const {
  for (const Entry& e : entries_)
    fn(packs_[e.pack], PackedBlob{e.type, e.id, e.offset, e.length, e.uncompressed_length});
}

std::vector<PackedBlob> Index::PackBlobs(const PackId& pack) const {
  std::vector<PackedBlob> out;
  for (size_t p = 0; p < packs_.size(); ++p) {
    if (packs_[p] != pack) continue;
    size_t end = p + 1 < pack_first_.size() ? pack_first_[p + 1] : entries_.size();
    for (size_t i = pack_first_[p]; i < end; ++i) {
      const Entry& e = entries_[i];
      out.push_back({e.type, e.id, e.offset, e.length, e.uncompressed_length});
    }
  }
  return out;
}

std::string IndexFile::ToJson() const {
  std::string out = "{\"packs\":[";
  bool first_pack = true;
  for (const Pack& p : packs) {
    if (!first_pack) out += ',';
    first_pack = false;
    out += "{\"id\":\"" + p.id.Hex() + "\",\"blobs\":[";
    bool first = true;
    for (const PackedBlob& b : p.blobs) {
      if (!first) out += ',';
      first = false;
      out += "{\"id\":\"" + b.id.Hex() + "\",\"type\":\"" + BlobTypeName(b.type) +
             "\",\"offset\":" + std::to_string(b.offset) +
             ",\"length\":" + std::to_string(b.length);
      if (b.uncompressed_length)
        out += ",\"uncompressed_length\":" + std::to_string(b.uncompressed_length);
      out += '}';
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

namespace {

void ParsePacks(simdjson::dom::array packs, IndexFile& out, const std::string& where) {
  for (simdjson::dom::element pe : packs) {
    IndexFile::Pack pack;
    std::string_view pid;
    if (pe["id"].get(pid))
      Fail(ErrorCode::kCorrupt, where + ": pack without id");
    auto id = PackId::FromHex(pid);
    if (!id) Fail(ErrorCode::kCorrupt, where + ": invalid pack id \"" + std::string(pid) + "\"");
    pack.id = *id;
    simdjson::dom::array blobs;
    if (pe["blobs"].get(blobs)) Fail(ErrorCode::kCorrupt, where + ": pack without blobs");
    for (simdjson::dom::element be : blobs) {
      PackedBlob b;
      std::string_view bid, type;
      uint64_t offset, length, ulen = 0;
      if (be["id"].get(bid) || be["type"].get(type) || be["offset"].get(offset) ||
          be["length"].get(length))
        Fail(ErrorCode::kCorrupt, where + ": incomplete blob entry in pack " + pack.id.Hex());
      auto u = be["uncompressed_length"];
      if (u.error() == simdjson::SUCCESS && u.get(ulen))
        Fail(ErrorCode::kCorrupt, where + ": invalid uncompressed_length");
      auto id2 = BlobId::FromHex(bid);
      if (!id2) Fail(ErrorCode::kCorrupt, where + ": invalid blob id \"" + std::string(bid) + "\"");
      if (type == "data")
        b.type = BlobType::kData;
      else if (type == "tree")
        b.type = BlobType::kTree;
      else
        Fail(ErrorCode::kCorrupt, where + ": invalid blob type \"" + std::string(type) + "\"");
      if (offset > 0xffffffffull || length > 0xffffffffull || ulen > 0xffffffffull ||
          length < 32)
        Fail(ErrorCode::kCorrupt, where + ": blob " + std::string(bid) + " has invalid sizes");
      b.id = *id2;
      b.offset = static_cast<uint32_t>(offset);
      b.length = static_cast<uint32_t>(length);
      b.uncompressed_length = static_cast<uint32_t>(ulen);
      pack.blobs.push_back(b);
    }
    out.packs.push_back(std::move(pack));
  }
}

}  // namespace

IndexFile IndexFile::Parse(std::string_view json, std::string_view name) {
  const std::string where = "index " + std::string(name);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc))
    Fail(ErrorCode::kCorrupt, where + ": invalid JSON");
  IndexFile out;
  simdjson::dom::array packs;
  if (doc.is_array()) {
    ParsePacks(doc.get_array().value_unsafe(), out, where);
    return out;
  }
  if (doc["packs"].get(packs)) {
    if (doc["packs"].is_null()) return out;
    Fail(ErrorCode::kCorrupt, where + ": missing \"packs\"");
  }
  ParsePacks(packs, out, where);
  simdjson::dom::array sup;
  if (!doc["supersedes"].get(sup)) {
    for (simdjson::dom::element s : sup) {
      std::string_view h;
      if (!s.get(h))
        if (auto id = RawId::FromHex(h)) out.supersedes.push_back(*id);
    }
  }
  return out;
}

}  // namespace haven
