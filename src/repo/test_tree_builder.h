// Tests only: builds tree blobs by hand, in any order and with any names, as a hostile or
// damaged repository would hold them (EncodeTree refuses unsorted and repeated names).
// Header-only, used by the restore and apply tests.
#pragma once

#include <string>
#include <vector>

#include "repo/node.h"
#include "repo/write_session.h"

namespace haven::testing {

class TreeBuilder {
 public:
  explicit TreeBuilder(WriteSession& repo) : repo_(repo) {}

  Node File(const std::string& name, const std::string& data) {
    Node n;
    n.name = name;
    n.type = NodeType::kFile;
    n.mode = 0644;
    n.size = data.size();
    if (!data.empty()) {
      BlobId id(Sha256(AsBytes(data)));
      repo_.SaveBlob(BlobType::kData, id, AsBytes(data));
      n.content.push_back(id);
    }
    return n;
  }
  static Node Dir(const std::string& name, const BlobId& subtree) {
    Node n;
    n.name = name;
    n.type = NodeType::kDir;
    n.mode = gomode::kDir | 0755;
    n.subtree = subtree;
    return n;
  }
  static Node Link(const std::string& name, const std::string& to) {
    Node n;
    n.name = name;
    n.type = NodeType::kSymlink;
    n.mode = gomode::kSymlink | 0777;
    n.linktarget = to;
    return n;
  }
  // A tree blob holding exactly these nodes, in this order.
  BlobId Tree(const std::vector<Node>& nodes) {
    std::string j = "{\"nodes\":[";
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i) j += ',';
      AppendNodeJson(j, nodes[i]);
    }
    j += "]}\n";
    BlobId id(Sha256(AsBytes(j)));
    repo_.SaveBlob(BlobType::kTree, id, AsBytes(j));
    return id;
  }

 private:
  WriteSession& repo_;
};

}  // namespace haven::testing
