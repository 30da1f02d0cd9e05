#include "maintenance/check.h"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <unordered_set>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/timings.h"
#include "repo/node.h"

namespace haven {

std::vector<std::string> CheckPackData(Repository& repo, const PackId& pack,
                                       const std::vector<PackedBlob>& indexed) {
  std::vector<std::string> errs;
  const std::string name = pack.Hex();
  Bytes data;
  try {
    ScopedTimer t(Stage::kLoad);
    data = repo.backend().Load({FileType::kPack, name});
  } catch (const Error& e) {
    errs.push_back("pack " + name + ": " + e.what());
    return errs;
  }
  if (Sha256(data) != static_cast<const RawId&>(pack))
    errs.push_back("pack " + name + ": content does not match its id (pack hash mismatch)");
  std::vector<PackedBlob> header;
  try {
    uint64_t need = 0;
    header = ParsePackHeader(repo.key(), data, data.size(), name, &need);
  } catch (const Error& e) {
    errs.push_back(e.what());
  }
  // Compare header and index.
  auto key = [](const PackedBlob& b) {
    return std::make_tuple(static_cast<int>(b.type), b.id, b.offset, b.length,
                           b.uncompressed_length);
  };
  if (!header.empty() || errs.empty()) {
    std::set<decltype(key(indexed[0]))> hs, is;
    for (const auto& b : header) hs.insert(key(b));
    for (const auto& b : indexed) is.insert(key(b));
    if (hs != is && !header.empty())
      errs.push_back("pack " + name + ": header entries do not match the index");
  }
  // Verify every indexed blob's bytes.
  ScopedTimer decode_timer(Stage::kDecode);
  for (const PackedBlob& b : indexed) {
    if (uint64_t(b.offset) + b.length > data.size()) {
      errs.push_back("pack " + name + ": blob " + b.id.Hex() + " lies beyond the end of the pack");
      continue;
    }
    try {
      repo.DecodeBlob(b.id, ByteView(data.data() + b.offset, b.length), b.uncompressed_length,
                      name);
    } catch (const Error& e) {
      errs.push_back(e.what());
    }
  }
  return errs;
}

namespace {

// Packs to read for --read-data-subset. "n/m" takes the packs whose id's first byte is
// n-1 modulo m, as restic does, so the m groups cover the repository exactly once.
std::vector<size_t> SelectSubset(const std::vector<PackId>& ids, const std::string& spec) {
  size_t n = ids.size();
  std::vector<size_t> out;
  if (spec.empty()) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  auto bad = [&] {
    Fail(ErrorCode::kInvalidArgument,
         "invalid --read-data-subset \"" + spec + "\" (want n/m or x%)");
  };
  if (spec.back() == '%') {
    char* end = nullptr;
    std::string num = spec.substr(0, spec.size() - 1);
    double pct = std::strtod(num.c_str(), &end);
    if (num.empty() || *end) bad();
    if (pct <= 0 || pct > 100)
      Fail(ErrorCode::kInvalidArgument, "invalid --read-data-subset " + spec);
    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = i;
    std::mt19937_64 rng(std::random_device{}());
    std::shuffle(all.begin(), all.end(), rng);
    size_t k = static_cast<size_t>(double(n) * pct / 100.0 + 0.999999);
    all.resize(std::min(k, n));
    std::sort(all.begin(), all.end());
    return all;
  }
  size_t slash = spec.find('/');
  if (slash == std::string::npos)
    Fail(ErrorCode::kInvalidArgument, "invalid --read-data-subset " + spec + " (want n/m or x%)");
  char* e1 = nullptr;
  char* e2 = nullptr;
  std::string gs = spec.substr(0, slash), ms = spec.substr(slash + 1);
  long g = std::strtol(gs.c_str(), &e1, 10), m = std::strtol(ms.c_str(), &e2, 10);
  if (gs.empty() || ms.empty() || *e1 || *e2) bad();
  if (m < 1 || g < 1 || g > m)
    Fail(ErrorCode::kInvalidArgument, "invalid --read-data-subset " + spec);
  for (size_t i = 0; i < n; ++i)
    if (static_cast<long>(ids[i].bytes[0] % m) == g - 1) out.push_back(i);
  return out;
}

}  // namespace

CheckResult RunCheck(Repository& repo, const CheckOptions& opts) {
  CheckResult res;
  auto stage = [&](const std::string& s) {
    if (opts.progress) opts.progress(s);
  };
  // Snapshots are listed before the index is loaded (a concurrent backup writes the
  // index before its snapshot).
  std::vector<FileId> snap_ids = repo.ListIds(FileType::kSnapshot);
  stage("load indexes");
  try {
    repo.LoadIndex();
  } catch (const Error& e) {
    res.errors.push_back(std::string("error loading index: ") + e.what());
    return res;
  }
  const Index& index = repo.index();

  stage("check all packs");
  std::map<PackId, uint64_t> on_disk;
  repo.backend().List(FileType::kPack, [&](const FileInfo& fi) {
    if (auto id = PackId::FromHex(fi.name)) on_disk[*id] = fi.size;
  });
  std::map<PackId, std::vector<PackedBlob>> packs;
  index.ForEach([&](const PackId& p, const PackedBlob& b) { packs[p].push_back(b); });
  // A pack listed by several index files (an interrupted prune or repair wrote the new index
  // but had not deleted the old one yet) is still one pack: merge identical entries. restic
  // reports this as a non-critical hint.
  for (auto& [pid, blobs] : packs) {
    auto key = [](const PackedBlob& b) {
      return std::make_tuple(b.offset, b.length, static_cast<int>(b.type), b.id,
                             b.uncompressed_length);
    };
    size_t n = blobs.size();
    std::sort(blobs.begin(), blobs.end(),
              [&](const PackedBlob& a, const PackedBlob& b) { return key(a) < key(b); });
    blobs.erase(std::unique(blobs.begin(), blobs.end(),
                            [&](const PackedBlob& a, const PackedBlob& b) { return key(a) == key(b); }),
                blobs.end());
    if (blobs.size() != n) res.hints.push_back("pack " + pid.Hex() + ": contained in several indexes");
  }
  for (auto& [pid, blobs] : packs) {
    auto it = on_disk.find(pid);
    if (it == on_disk.end()) {
      res.errors.push_back("pack " + pid.Hex() + ": does not exist");
      continue;
    }
    uint64_t expect = PackHeaderSize(blobs);
    for (const auto& b : blobs) expect += b.length;
    if (it->second != expect)
      res.errors.push_back("pack " + pid.Hex() + ": size is " + std::to_string(it->second) +
                           " bytes but the index describes " + std::to_string(expect));
    bool mixed = false;
    for (const auto& b : blobs) mixed |= b.type != blobs[0].type;
    if (mixed) res.hints.push_back("pack " + pid.Hex() + ": holds both data and tree blobs");
  }
  for (const auto& [pid, size] : on_disk)
    if (!packs.count(pid))
      res.hints.push_back("pack " + pid.Hex() + ": not referenced in any index");

  stage("check snapshots, trees and blobs");
  std::unordered_set<RawId, IdHash> seen_trees;
  std::unordered_set<RawId, IdHash> used_data;
  for (const FileId& sid : snap_ids) {
    Snapshot snap;
    try {
      snap = Snapshot::Parse(repo.LoadJson(FileType::kSnapshot, sid), sid.Hex());
    } catch (const Error& e) {
      res.errors.push_back(std::string(e.what()) +
                           " (`haven repair snapshots --forget` can remove it)");
      continue;
    }
    std::vector<std::pair<BlobId, std::string>> stack{{snap.tree, "/"}};
    while (!stack.empty()) {
      auto [tid, path] = stack.back();
      stack.pop_back();
      if (!seen_trees.insert(tid).second) continue;
      if (!index.Has(BlobType::kTree, tid)) {
        res.errors.push_back("snapshot " + sid.Short() + ": tree " + tid.Hex() + " (" + path +
                             ") is not in the index");
        continue;
      }
      std::vector<Node> nodes;
      try {
        nodes = repo.LoadTree(tid);
      } catch (const Error& e) {
        res.errors.push_back("snapshot " + sid.Short() + ": tree " + tid.Hex() + " (" + path +
                             "): " + e.what());
        continue;
      }
      for (const Node& n : nodes) {
        std::string child = path == "/" ? "/" + n.name : path + "/" + n.name;
        if (n.type == NodeType::kDir) {
          if (!n.subtree) {
            res.errors.push_back("snapshot " + sid.Short() + ": tree " + tid.Hex() + ": dir " +
                                 child + " has no subtree");
          } else {
            stack.emplace_back(*n.subtree, child);
          }
        } else if (n.type == NodeType::kFile) {
          for (const BlobId& b : n.content) {
            if (!used_data.insert(b).second) continue;
            if (!index.Has(BlobType::kData, b))
              res.errors.push_back("snapshot " + sid.Short() + ": tree " + tid.Hex() + ": file " +
                                   child + " blob " + b.Hex() + " is not in the index");
          }
        }
      }
    }
  }

  if (opts.read_data || !opts.read_data_subset.empty()) {
    stage("read all data");
    std::vector<PackId> ids;
    for (const auto& [pid, blobs] : packs)
      if (on_disk.count(pid)) ids.push_back(pid);
    std::vector<size_t> sel = SelectSubset(ids, opts.read_data_subset);
    std::mutex mu;
    std::atomic<size_t> next{0};
    int threads = std::max(1, ResolveJobs(opts.jobs));
    std::vector<std::thread> workers;
    std::vector<std::vector<std::string>> per_pack(sel.size());
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (;;) {
          size_t i = next.fetch_add(1);
          if (i >= sel.size()) return;
          const PackId& pid = ids[sel[i]];
          per_pack[i] = CheckPackData(repo, pid, packs[pid]);
        }
      });
    }
    for (auto& w : workers) w.join();
    for (auto& errs : per_pack)
      for (auto& e : errs) res.errors.push_back(std::move(e));
    res.packs_read = sel.size();
  }
  return res;
}

}  // namespace haven
