#include "maintenance/rechunk_tree.h"

#include "chunker/chunker.h"
#include "core/error.h"
#include "repo/node.h"

namespace haven {

Rechunker::Rechunker(IndexedRepository& src, WriteSession& dst) : src_(src), dst_(dst) {}

BlobId Rechunker::StoreChunk(ByteView chunk) {
  const BlobId id(Sha256(chunk));
  if (dst_.SaveBlob(BlobType::kData, id, chunk)) {
    chunks_++;
    bytes_ += chunk.size();
  }
  return id;
}

std::vector<BlobId> Rechunker::Content(const std::vector<BlobId>& content) {
  std::string key;
  key.reserve(content.size() * 32);
  for (const BlobId& b : content) key.append(reinterpret_cast<const char*>(b.bytes.data()), 32);
  if (auto it = contents_.find(key); it != contents_.end()) return it->second;
  chunker::Chunker cut(dst_.repo().chunker_tables());
  std::vector<BlobId> out;
  Bytes pending;  // the current chunk's bytes so far (at most chunker::kMaxSize)
  for (const BlobId& b : content) {
    const Bytes plain = src_.LoadBlob(BlobType::kData, b);
    ByteView rest(plain.data(), plain.size());
    while (!rest.empty()) {
      const std::optional<size_t> end = cut.Next(rest);
      const size_t take = end ? *end : rest.size();
      pending.insert(pending.end(), rest.begin(), rest.begin() + take);
      rest = rest.subspan(take);
      if (!end) break;
      out.push_back(StoreChunk(pending));
      pending.clear();
    }
  }
  if (!pending.empty()) out.push_back(StoreChunk(pending));
  contents_.emplace(std::move(key), out);
  return out;
}

BlobId Rechunker::Tree(const std::string& path, const BlobId& id) {
  BlobId out;
  RunOnDeepStack([&] { out = TreeAt(path, id); });
  return out;
}

BlobId Rechunker::TreeAt(const std::string& path, const BlobId& id) {
  if (auto it = trees_.find(id); it != trees_.end()) return it->second;
  TreeLevel level(depth_, path);
  std::vector<Node> nodes = src_.LoadTree(id);
  if (!EncodesBackTo(nodes, id))
    Fail(ErrorCode::kCorrupt, "cannot re-chunk the tree at \"" + path + "\" (" + id.Short() +
                                  "): it does not encode again without losing information");
  for (Node& n : nodes) {
    if (n.subtree)
      n.subtree = TreeAt((path == "/" ? "/" : path + "/") + n.name, *n.subtree);
    if (n.type == NodeType::kFile && !n.content.empty()) n.content = Content(n.content);
  }
  const std::string out = EncodeTree(nodes);
  const BlobId nid(Sha256(AsBytes(out)));
  dst_.SaveBlob(BlobType::kTree, nid, AsBytes(out));
  trees_.emplace(id, nid);
  return nid;
}

}  // namespace haven
