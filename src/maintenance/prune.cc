#include "maintenance/prune.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <future>
#include <limits>
#include <optional>
#include <semaphore>
#include <unordered_map>
#include <unordered_set>

#include "backend/range_reader.h"
#include "core/error.h"
#include "core/timings.h"
#include "maintenance/forget_policy.h"
#include "maintenance/index_writer.h"
#include "repo/lock.h"
#include "repo/write_session.h"

namespace haven {

namespace {

constexpr int kTypeUnset = -1, kTypeMixed = 2;

struct PackInfo {
  uint64_t used_blobs = 0, unused_blobs = 0, used_size = 0, unused_size = 0;
  int type = kTypeUnset;  // BlobType as int, or kTypeMixed
  bool uncompressed = false;
  uint64_t Size() const { return used_size + unused_size; }
};

struct Candidate {
  PackId id;
  PackInfo info;
  bool must_compress = false;
};

int TypeIndex(BlobType t) { return static_cast<int>(t); }

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

void Progress(const PruneOptions& o, const std::string& s) {
  if (o.progress) o.progress(s);
}
void Warn(const PruneOptions& o, const std::string& s) {
  if (o.warn) o.warn(s);
}

int Threads(Repository& repo, const PruneOptions& o) {
  return std::max(1, o.jobs > 0 ? o.jobs : repo.threads());
}

}  // namespace

uint64_t ParsePruneSize(const std::string& in, const std::string& what) {
  std::string s = Trim(in);
  auto bad = [&] {
    Fail(ErrorCode::kInvalidArgument, "invalid size \"" + in + "\" for " + what +
                                          " (want a number with optional suffix k, m, g or t)");
  };
  if (s.empty()) bad();
  uint64_t unit = 1;
  switch (s.back()) {
    case 'b': case 'B': s.pop_back(); break;
    case 'k': case 'K': unit = uint64_t{1} << 10; s.pop_back(); break;
    case 'm': case 'M': unit = uint64_t{1} << 20; s.pop_back(); break;
    case 'g': case 'G': unit = uint64_t{1} << 30; s.pop_back(); break;
    case 't': case 'T': unit = uint64_t{1} << 40; s.pop_back(); break;
    default: break;
  }
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  if (s.empty() || s.size() > 19) bad();
  for (char c : s)
    if (c < '0' || c > '9') bad();
  uint64_t v = std::stoull(s);
  if (v > std::numeric_limits<uint64_t>::max() / unit) bad();
  return v * unit;
}

int64_t ParseUnreferencedGrace(const std::string& s) {
  forget::Duration d;
  try {
    d = forget::ParseDuration(s);
  } catch (const Error& e) {
    Fail(ErrorCode::kInvalidArgument, "invalid argument \"" + s + "\" for \"--unreferenced-grace\" flag: " + e.what());
  }
  if (d.Negative())
    Fail(ErrorCode::kInvalidArgument, "invalid argument \"" + s + "\" for \"--unreferenced-grace\" flag: negative");
  const int64_t days = int64_t{d.years} * 365 + int64_t{d.months} * 30 + d.days;
  return (days * 24 + d.hours) * 3600;
}

std::function<uint64_t(uint64_t)> ParseMaxUnused(const std::string& in) {
  std::string s = Trim(in);
  if (s.empty())
    Fail(ErrorCode::kInvalidArgument, "invalid value for --max-unused: \"" + in + "\"");
  if (s == "unlimited") return [](uint64_t) { return std::numeric_limits<uint64_t>::max(); };
  if (s.back() == '%') {
    std::string num = s.substr(0, s.size() - 1);
    char* end = nullptr;
    double p = std::strtod(num.c_str(), &end);
    if (num.empty() || *end || !std::isfinite(p))
      Fail(ErrorCode::kInvalidArgument,
           "invalid percentage \"" + in + "\" passed for --max-unused");
    if (p < 0) Fail(ErrorCode::kInvalidArgument, "percentage for --max-unused must be positive");
    if (p >= 100)
      Fail(ErrorCode::kInvalidArgument, "percentage for --max-unused must be below 100%");
    return [p](uint64_t used) {
      double v = p / (100 - p) * double(used);
      return v >= 1.8e19 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(v);
    };
  }
  uint64_t size = ParsePruneSize(s, "--max-unused");
  return [size](uint64_t) { return size; };
}

namespace {

// The parsed limits of the options.
struct PruneLimits {
  std::function<uint64_t(uint64_t)> max_unused;
  uint64_t max_repack = std::numeric_limits<uint64_t>::max();  // max = unlimited
  uint64_t target = 0;  // packs below this size are "small"
};

PruneLimits ParseLimits(const Repository& repo, const PruneOptions& opts) {
  PruneLimits l;
  l.max_unused = ParseMaxUnused(opts.max_unused);
  if (!Trim(opts.max_repack_size).empty())
    l.max_repack = ParsePruneSize(opts.max_repack_size, "--max-repack-size");
  if (opts.repack_uncompressed && repo.config().version < 2)
    Fail(ErrorCode::kInvalidArgument,
         "compression requires at least repository format version 2");
  if (opts.repack_uncompressed && opts.write.compression == Compression::kOff)
    Fail(ErrorCode::kInvalidArgument,
         "disabled compression and `--repack-uncompressed` are mutually exclusive");
  l.target = opts.repack_small ? opts.write.pack_size / 5 * 4 : opts.write.pack_size / 25;
  return l;
}

// The trees of every snapshot except opts.ignore_snapshots. Unlike the read-only commands,
// prune does not skip a snapshot it cannot load: it cannot know which data that snapshot
// needs (and a read error may be transient), so going on could delete it. The user removes
// a damaged one explicitly first.
std::vector<UsedBlobsRoot> SnapshotRoots(Repository& repo, const PruneOptions& opts) {
  std::vector<Repository::SnapshotFailure> all_failed;
  auto snaps = repo.LoadSnapshots(&all_failed);
  std::vector<Repository::SnapshotFailure> failed;
  for (auto& f : all_failed)
    if (!opts.ignore_snapshots.contains(f.id)) failed.push_back(std::move(f));
  if (!failed.empty())
    Fail(ErrorCode::kCorrupt,
         "snapshot " + failed[0].id.Hex() + " cannot be loaded (" + failed[0].error +
             "); prune would delete data that only it may use. " +
             (failed[0].io ? "Retry when the storage reads again, or remove"
                           : "Remove") +
             " it with `haven repair snapshots --forget` (or `haven forget " +
             failed[0].id.Short() + "`), then prune" +
             (failed.size() > 1 ? " (" + std::to_string(failed.size()) + " snapshots fail to load)"
                                : ""));
  std::vector<UsedBlobsRoot> roots;
  roots.reserve(snaps.size());
  for (const auto& [id, s] : snaps)
    if (!opts.ignore_snapshots.contains(id)) roots.push_back({id, s.tree});
  return roots;
}

// Where the plan gets the snapshots' roots from (loaded now, or beside the index load).
using RootsSource = std::function<std::vector<UsedBlobsRoot>()>;

// Walks every snapshot's trees (the lock is exclusive, so the order of index and snapshots
// does not matter here).
UsedBlobs FindUsed(IndexedRepository& repo, const PruneOptions& opts, const RootsSource& load) {
  Progress(opts, "loading all snapshots...");
  const std::vector<UsedBlobsRoot> roots = load();
  Progress(opts, "finding data that is still in use for " + std::to_string(roots.size()) +
                     " snapshots");
  UsedBlobsOptions uo;
  // loads wait on storage: by default at least as many at once as it serves (S3: 5)
  uo.threads = opts.jobs > 0 ? opts.jobs : std::max(Threads(repo, opts), repo.backend().Connections());
  ScopedTimer t(Stage::kWalk);
  return FindUsedBlobs(repo, roots, uo);
}

// What the plan knows of the index: its packs, the used blobs and restic's duplicate
// count per used blob (1 = seen once, >= 2 = number of copies, saturating at 255).
struct PruneIndex {
  const Index& index;
  const IndexPackView& packs;
  const UsedBlobs& used;
  std::vector<uint8_t> count[2];

  // The blob's index position when it is used, else npos. The view gives each blob's
  // index position (where its used bit lives): no lookups.
  size_t UsedPos(const PackedBlob& b, size_t first_pos) const {
    return used.UsedAt(b.type, first_pos) ? first_pos : UsedBlobs::npos;
  }
};

// Pass 1: how often the index holds each used blob; the blob statistics.
void CountCopies(PruneIndex& px, PruneStats& st) {
  const Index& index = px.index;
  px.count[0].assign(index.Positions(BlobType::kData), 0);
  px.count[1].assign(index.Positions(BlobType::kTree), 0);
  std::vector<size_t> first;
  for (size_t i = 0; i < px.packs.size(); ++i) {
    const std::vector<PackedBlob> blobs = px.packs.blobs(i, &first);
    for (size_t k = 0; k < blobs.size(); ++k) {
      const PackedBlob& b = blobs[k];
      size_t pos = px.UsedPos(b, first[k]);
      if (pos == UsedBlobs::npos) {
        st.size.unused += b.length;
        st.blobs.unused++;
        continue;
      }
      uint8_t& c = px.count[TypeIndex(b.type)][pos];
      if (c == 0) {
        c = 1;
        st.size.used += b.length;
        st.blobs.used++;
      } else {
        c = c == 1 ? 2 : static_cast<uint8_t>(std::min(255, c + 1));
        st.size.duplicate += b.length;
        st.blobs.duplicate++;
      }
    }
  }
}

// Refuses when a used blob is in no index.
void RequireCompleteIndex(const UsedBlobs& used) {
  uint64_t missing = 0;
  std::string examples;
  for (int t = 0; t < 2; ++t) {
    for (const BlobId& id : used.Missing(static_cast<BlobType>(t))) {
      if (missing++ < 5)
        examples += std::string("\n  ") + BlobTypeName(static_cast<BlobType>(t)) + " blob " +
                    id.Hex();
    }
  }
  if (missing)
    Fail(ErrorCode::kCorrupt,
         "index is not complete: " + std::to_string(missing) +
             " used blob(s) not found in the index:" + examples +
             (missing > 5 ? "\n  ..." : "") +
             "\nIntegrity check failed: Data seems to be missing.\n"
             "Will not start prune to prevent (additional) data loss!\n"
             "Run `haven check`; `haven repair index` adds packs missing from the index.");
}

// Pass 2: per-pack usage, duplicates left for pass 3.
std::vector<PackInfo> PackUsage(const PruneIndex& px) {
  std::vector<PackInfo> info(px.packs.size());
  std::vector<size_t> first;
  for (size_t i = 0; i < px.packs.size(); ++i) {
    PackInfo& ip = info[i];
    const std::vector<PackedBlob> blobs = px.packs.blobs(i, &first);
    ip.used_size = PackHeaderSize(blobs);
    for (size_t k = 0; k < blobs.size(); ++k) {
      const PackedBlob& b = blobs[k];
      int t = TypeIndex(b.type);
      if (ip.type == kTypeUnset) ip.type = t;
      if (ip.type != t) ip.type = kTypeMixed;
      size_t pos = px.UsedPos(b, first[k]);
      if (pos != UsedBlobs::npos && px.count[t][pos] >= 2) {
        // duplicate: pass 3
      } else if (pos != UsedBlobs::npos) {
        ip.used_size += b.length;
        ip.used_blobs++;
      } else {
        ip.unused_size += b.length;
        ip.unused_blobs++;
      }
      if (b.uncompressed_length == 0) ip.uncompressed = true;
    }
  }
  return info;
}

// Pass 3: one copy of each duplicate counts as used, preferring packs that hold other
// used blobs, else the last copy seen.
void AssignDuplicates(const PruneIndex& px, std::vector<PackInfo>& info) {
  std::vector<uint8_t> left[2] = {px.count[0], px.count[1]};
  std::vector<size_t> first;
  for (size_t i = 0; i < px.packs.size(); ++i) {
    PackInfo& ip = info[i];
    const std::vector<PackedBlob> blobs = px.packs.blobs(i, &first);
    for (size_t k = 0; k < blobs.size(); ++k) {
      const PackedBlob& b = blobs[k];
      int t = TypeIndex(b.type);
      size_t pos = px.UsedPos(b, first[k]);
      if (pos == UsedBlobs::npos || px.count[t][pos] < 2) continue;
      uint8_t& l = left[t][pos];
      if (l == 0) {
        ip.unused_size += b.length;
        ip.unused_blobs++;
      } else if (ip.used_blobs > 0 || l == 1) {
        ip.used_size += b.length;
        ip.used_blobs++;
        l = 0;
      } else {
        ip.unused_size += b.length;
        ip.unused_blobs++;
        --l;
      }
    }
  }
}

// The decisions per indexed pack, filled by the classification steps.
struct PackDecisions {
  std::vector<char> seen;      // listed on storage
  std::vector<char> excluded;  // removed, repacked or ignored
  std::vector<Candidate> candidates, small;  // repack candidates; small complete packs
};

// One pack on storage the index describes: remove (nothing used), keep, or a candidate.
void ClassifyPack(const PackId& id, uint64_t size, const PackInfo& p, size_t i, int version,
                  const PruneOptions& opts, uint64_t target, PrunePlan& plan,
                  PackDecisions& d) {
  PruneStats& st = plan.stats;
  if (p.used_blobs == 0) {
    st.packs.unused++;
  } else if (p.unused_blobs == 0) {
    st.packs.used++;
  } else {
    st.packs.partly_used++;
  }
  bool must_compress = version >= 2 &&
                       (p.type == TypeIndex(BlobType::kTree) || opts.repack_uncompressed) &&
                       p.uncompressed;
  if (p.used_blobs == 0) {
    plan.remove.push_back(id);
    d.excluded[i] = 1;
    st.blobs.remove += p.unused_blobs;
    st.size.remove += p.unused_size;
  } else if (opts.repack_cacheable_only && p.type == TypeIndex(BlobType::kData)) {
    st.packs.keep++;
  } else if (p.unused_blobs == 0 && p.type != kTypeMixed && !must_compress) {
    if (size >= target) {
      st.packs.keep++;
    } else {
      d.small.push_back({id, p, must_compress});
    }
  } else {
    d.candidates.push_back({id, p, must_compress});
  }
}

// Every pack file on storage, with its size.
using ListedPacks = std::vector<std::pair<PackId, uint64_t>>;
ListedPacks ListPacks(IndexedRepository& repo) {
  ListedPacks listed;
  repo.backend().List(FileType::kPack, [&](const FileInfo& fi) {
    if (auto id = PackId::FromHex(fi.name)) listed.emplace_back(*id, fi.size);
  });
  return listed;
}

// With a grace period, moves the unreferenced packs the storage got less than
// `unreferenced_grace` seconds ago (or whose age it cannot tell) from remove_first to young.
void KeepYoungUnreferenced(IndexedRepository& repo, const ListedPacks& listed,
                           const PruneOptions& opts, PrunePlan& plan) {
  if (opts.unreferenced_grace <= 0 || plan.remove_first.empty()) return;
  const std::optional<int64_t> now = StorageNow(repo);
  std::unordered_map<PackId, uint64_t, IdHash> size_of(listed.begin(), listed.end());
  std::vector<PackId> old;
  for (const PackId& id : plan.remove_first) {
    std::optional<int64_t> mtime;
    if (now) {
      try {
        mtime = repo.backend().ModTime({FileType::kPack, id.Hex()});
      } catch (const Error&) {
      }
    }
    if (mtime && *now - *mtime >= opts.unreferenced_grace) {
      old.push_back(id);
    } else {
      plan.young.push_back(id);
      plan.stats.size.unref -= size_of[id];
    }
  }
  plan.remove_first = std::move(old);
  if (!plan.young.empty())
    Warn(opts, "kept " + std::to_string(plan.young.size()) + " unreferenced pack(s) " +
                   (now ? "younger than the grace period of " + std::to_string(opts.unreferenced_grace) + " s"
                        : "(the storage keeps no modification times)") +
                   ": their index may not be listed yet; a later prune removes them");
}

// Every pack file on storage: unreferenced ones go first; an indexed one whose size
// differs from the index while it holds used blobs makes prune refuse.
void ClassifyListedPacks(IndexedRepository& repo, const ListedPacks& listed,
                         const IndexPackView& packs, const std::vector<PackInfo>& info,
                         const PruneOptions& opts, uint64_t target, PrunePlan& plan,
                         PackDecisions& d) {
  std::string size_errors;
  uint64_t size_error_count = 0;
  const int version = repo.config().version;
  for (const auto& [id, size] : listed) {
    long i = packs.Find(id);
    if (i < 0) {
      plan.remove_first.push_back(id);
      plan.stats.size.unref += size;
      continue;
    }
    if (d.seen[i]) continue;  // listed twice: ignore the second
    d.seen[i] = 1;
    const PackInfo& p = info[i];
    if (p.Size() != size && p.used_blobs != 0) {
      size_error_count++;
      size_errors += "\n  pack " + id.Hex() + ": calculated size " + std::to_string(p.Size()) +
                     " does not match real size " + std::to_string(size);
      continue;
    }
    ClassifyPack(id, size, p, i, version, opts, target, plan, d);
  }
  KeepYoungUnreferenced(repo, listed, opts, plan);
  if (size_error_count)
    Fail(ErrorCode::kCorrupt,
         "pack size does not match calculated size from index for " +
             std::to_string(size_error_count) + " pack(s) holding used blobs:" + size_errors +
             "\nRun `haven repair index`.");
}

// Indexed packs missing from storage: forget them if unused, else refuse.
void ClassifyMissingPacks(const IndexPackView& packs, const std::vector<PackInfo>& info,
                          const PruneOptions& opts, PrunePlan& plan, PackDecisions& d) {
  PruneStats& st = plan.stats;
  std::string missing_list;
  uint64_t missing = 0;
  for (size_t i = 0; i < packs.size(); ++i) {
    if (d.seen[i]) continue;
    if (info[i].used_blobs == 0) {
      plan.ignore.push_back(packs.id(i));
      d.excluded[i] = 1;
      st.blobs.remove += info[i].unused_blobs;
      st.size.remove += info[i].unused_size;
    } else {
      missing++;
      missing_list += "\n  " + packs.id(i).Hex();
    }
  }
  if (missing)
    Fail(ErrorCode::kCorrupt, "packs from index missing in repo: the index references " +
                                  std::to_string(missing) +
                                  " needed pack file(s) which are missing from the repository:" +
                                  missing_list);
  if (!plan.ignore.empty()) {
    Warn(opts, "Missing but unneeded pack files are referenced in the index, will be repaired");
    for (const PackId& id : plan.ignore) Warn(opts, "will forget missing pack file " + id.Hex());
  }
}

// Classifies every pack (keep / repack candidate / remove / unreferenced / ignore).
PackDecisions ClassifyPacks(IndexedRepository& repo, const ListedPacks& listed,
                            const IndexPackView& packs, const std::vector<PackInfo>& info,
                            const PruneOptions& opts, uint64_t target, PrunePlan& plan) {
  Progress(opts, "collecting packs for deletion and repacking");
  PackDecisions d;
  d.seen.assign(packs.size(), 0);
  d.excluded.assign(packs.size(), 0);
  ClassifyListedPacks(repo, listed, packs, info, opts, target, plan, d);
  ClassifyMissingPacks(packs, info, opts, plan, d);
  if (d.small.size() < 10) {
    // too few small packs to be worth it; also avoids repacking a single small pack forever
    plan.stats.packs.keep += d.small.size();
  } else {
    d.candidates.insert(d.candidates.end(), d.small.begin(), d.small.end());
  }
  return d;
}

// Tree and mixed packs first, then packs below the target size, then by descending
// unused/used ratio.
void SortCandidates(std::vector<Candidate>& candidates, uint64_t target) {
  const int data_type = TypeIndex(BlobType::kData);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Candidate& a, const Candidate& b) {
                     const PackInfo& pi = a.info;
                     const PackInfo& pj = b.info;
                     if (pi.type != data_type && pj.type == data_type) return true;
                     if (pj.type != data_type && pi.type == data_type) return false;
                     if (pi.Size() < target && pj.Size() >= target) return true;
                     if (pj.Size() < target && pi.Size() >= target) return false;
                     return static_cast<unsigned __int128>(pi.unused_size) * pj.used_size >
                            static_cast<unsigned __int128>(pj.unused_size) * pi.used_size;
                   });
}

// Whether to repack candidate c, given what is chosen so far (restic 0.14's rules).
bool ShouldRepack(const Candidate& c, const PruneStats& st, const PruneLimits& l,
                  uint64_t max_unused_after) {
  const PackInfo& p = c.info;
  // restic 0.14 compares (unused - remove - repackrm); counting duplicates as unused too
  // (as restic's own statistics do) avoids its unsigned wrap-around.
  uint64_t unused_total = st.size.unused + st.size.duplicate;
  uint64_t gone = st.size.remove + st.size.repackrm;
  uint64_t unused_after = unused_total > gone ? unused_total - gone : 0;
  bool reached_unused = unused_after < max_unused_after;
  bool reached_repack = l.max_repack == std::numeric_limits<uint64_t>::max()
                            ? false
                            : st.size.repack + p.Size() >= l.max_repack;
  bool large_enough = p.Size() >= l.target;
  if (reached_repack) return false;
  if (p.type != TypeIndex(BlobType::kData) || c.must_compress) return true;
  return !(reached_unused && large_enough);
}

// Chooses the packs to repack within --max-unused and --max-repack-size.
void ChooseRepacks(const IndexPackView& packs, const PruneLimits& l, PrunePlan& plan,
                   PackDecisions& d) {
  PruneStats& st = plan.stats;
  SortCandidates(d.candidates, l.target);
  const uint64_t max_unused_after = l.max_unused(st.size.used);
  for (const Candidate& c : d.candidates) {
    if (!ShouldRepack(c, st, l, max_unused_after)) {
      st.packs.keep++;
      continue;
    }
    const PackInfo& p = c.info;
    plan.repack.push_back(c.id);
    d.excluded[packs.Find(c.id)] = 1;
    st.blobs.repack += p.unused_blobs + p.used_blobs;
    st.size.repack += p.Size();
    st.blobs.repackrm += p.unused_blobs;
    st.size.repackrm += p.unused_size;
  }
  st.packs.unref = plan.remove_first.size();
  st.packs.repack = plan.repack.size();
  st.packs.remove = plan.remove.size();
}

// The blobs to copy out of the repacked packs: used blobs no kept pack already holds.
void BlobsToCopy(const PruneIndex& px, const std::vector<char>& excluded, PrunePlan& plan) {
  if (plan.repack.empty()) return;
  std::vector<char> elsewhere[2] = {std::vector<char>(px.count[0].size()),
                                    std::vector<char>(px.count[1].size())};
  std::vector<size_t> first;
  for (size_t i = 0; i < px.packs.size(); ++i) {
    if (excluded[i]) continue;
    const std::vector<PackedBlob> blobs = px.packs.blobs(i, &first);
    for (size_t k = 0; k < blobs.size(); ++k) {
      size_t pos = px.UsedPos(blobs[k], first[k]);
      if (pos != UsedBlobs::npos) elsewhere[TypeIndex(blobs[k].type)][pos] = 1;
    }
  }
  std::vector<BlobId> keep[2];
  for (int t = 0; t < 2; ++t) {
    const BlobType type = static_cast<BlobType>(t);
    for (size_t pos = 0; pos < px.count[t].size(); ++pos)
      if (px.used.UsedAt(type, pos) && !elsewhere[t][pos])
        keep[t].push_back(px.index.EntryAt(type, pos, nullptr).id);
  }
  plan.keep.data = SortedBlobSet(std::move(keep[0]));
  plan.keep.trees = SortedBlobSet(std::move(keep[1]));
}

}  // namespace

namespace {

PrunePlan Plan(IndexedRepository& repo, const PruneOptions& opts, const RootsSource& roots) {
  const PruneLimits limits = ParseLimits(repo, opts);
  PrunePlan plan;
  // The pack listing (one request per 1,000 packs on S3) runs beside the used-blob walk
  // (and the snapshot loading, when that is not done already), where it costs no wall
  // time; the index is loaded already, so it never competes with the index reads.
  std::future<ListedPacks> listing =
      std::async(std::launch::async, [&repo] { return ListPacks(repo); });
  const UsedBlobs used = FindUsed(repo, opts, roots);
  ScopedTimer plan_timer(Stage::kPlan);

  Progress(opts, "searching used packs...");
  IndexPackView packs(repo.index());  // 4 bytes per blob, not a copy of the index
  plan.rewrite_index = packs.had_duplicates();
  PruneIndex px{repo.index(), packs, used, {}};
  CountCopies(px, plan.stats);
  RequireCompleteIndex(used);
  std::vector<PackInfo> info = PackUsage(px);
  if (plan.stats.blobs.duplicate > 0) AssignDuplicates(px, info);

  const ListedPacks listed = listing.get();
  PackDecisions d = ClassifyPacks(repo, listed, packs, info, opts, limits.target, plan);
  ChooseRepacks(packs, limits, plan, d);
  BlobsToCopy(px, d.excluded, plan);
  return plan;
}

}  // namespace

PrunePlan PlanPrune(IndexedRepository& repo, const PruneOptions& opts) {
  return Plan(repo, opts, [&] { return SnapshotRoots(repo, opts); });
}

namespace {

std::vector<RawId> Raw(const std::vector<PackId>& v) {
  return std::vector<RawId>(v.begin(), v.end());
}

// Per blob of plan.keep: copied already (by any pack's worker).
struct RepackClaims {
  std::vector<std::atomic<bool>> claimed[2];

  explicit RepackClaims(const BlobSets& keep)
      : claimed{std::vector<std::atomic<bool>>(keep.data.size()),
                std::vector<std::atomic<bool>>(keep.trees.size())} {}
  std::atomic<bool>& Of(const BlobSets& keep, const PackedBlob& b) {
    return claimed[TypeIndex(b.type)][keep.Of(b.type).Find(b.id)];
  }
  uint64_t NotCopied() const {
    uint64_t n = 0;
    for (auto& v : claimed)
      for (auto& f : v)
        if (!f.load()) ++n;
    return n;
  }
};

// The blobs of pack `pi` still to copy, by offset.
std::vector<const PackedBlob*> BlobsToRepack(const std::vector<PackedBlob>& blobs,
                                             const BlobSets& keep, RepackClaims& claims) {
  std::vector<const PackedBlob*> want;
  for (const PackedBlob& b : blobs) {
    size_t pos = keep.Of(b.type).Find(b.id);
    if (pos == SortedBlobSet::npos || claims.claimed[TypeIndex(b.type)][pos].load()) continue;
    want.push_back(&b);
  }
  std::sort(want.begin(), want.end(),
            [](const PackedBlob* a, const PackedBlob* b) { return a->offset < b->offset; });
  return want;
}

// Copies one blob of pack `name` (its bytes in `range`, read from offset `lo`, unless
// load_error) into a new pack; a copy damaged here is taken from another pack when there
// is one.
void CopyBlob(WriteSession& session, const PackedBlob& b, const std::string& name,
              ByteView range, uint64_t lo, const std::string& load_error,
              std::atomic<bool>& claimed) {
  if (claimed.load()) return;
  IndexedRepository& repo = session.repo();
  Bytes plain;
  ByteView sealed;
  uint32_t ulen = 0;
  std::string err = load_error;
  if (err.empty()) {
    ByteView slice = range.subspan(b.offset - lo, b.length);
    try {
      plain = repo.DecodeBlob(b.id, slice, b.uncompressed_length, name);
      sealed = slice;
      ulen = b.uncompressed_length;
    } catch (const Error& e) {
      err = e.what();
    }
  }
  if (!err.empty()) {
    // Damaged here: another copy may be intact.
    try {
      plain = repo.LoadBlob(b.type, b.id);
    } catch (const Error& e) {
      Fail(ErrorCode::kCorrupt, "repacking pack " + name + ": " + err + " (" + e.what() + ")");
    }
  }
  if (claimed.exchange(true)) return;
  session.SaveBlobCopy(b.type, b.id, plain, sealed, ulen);
}

// Streams of repack at once: the storage's connections less the session's uploads (at
// least one left). A stream holds its connection while its blobs are copied, and a copy
// may wait for a pack upload (or load a damaged blob's other copy), which needs a
// connection of its own: with every connection held by a stream waiting for an upload,
// nothing would move. The connections left over serve the uploads and loads. Null:
// ranges are loaded whole.
class StreamSlots {
 public:
  explicit StreamSlots(int n) : free_(n) {}
  template <typename Fn>
  void Run(Fn&& fn) {
    free_.acquire();
    struct Release {
      std::counting_semaphore<>& s;
      ~Release() { s.release(); }
    } release{free_};
    fn();
  }

 private:
  std::counting_semaphore<> free_;
};

// Copies the still-wanted blobs of one pack: one ranged read per run of them (bounded
// by `split`), the runs of one pack read in parallel. With `streams` (storage with round
// trips) each run is streamed and each blob copied as soon as its bytes have come.
void RepackPack(WriteSession& session, RangeReader& reader, const RangeLimits& split,
                const PackTable& packs, const PackId& pid, const BlobSets& keep,
                RepackClaims& claims, StreamSlots* streams) {
  long pi = packs.Find(pid);
  if (pi < 0) Fail(ErrorCode::kFatal, "internal error: pack " + pid.Hex() + " not indexed");
  const std::vector<const PackedBlob*> want = BlobsToRepack(packs.blobs(pi), keep, claims);
  if (want.empty()) return;
  const std::string name = pid.Hex();
  auto extent = [&](size_t k) { return ByteRange{want[k]->offset, want[k]->length}; };
  const std::vector<ByteRange> ranges =
      CoalesceExtents(want.size(), extent, split.max_hole, split.max_span);
  if (streams) {
    Backend& be = session.repo().backend();
    reader.ForEachRange(ranges.size(), [&](size_t r) {
      size_t handed = ranges[r].first;
      std::string load_error;
      bool copying = false;  // an error thrown by CopyBlob itself is not a load error
      try {
        streams->Run([&] {
          StreamExtents(
              be, {FileType::kPack, name}, ranges[r], extent,
              [&](size_t k, size_t m, std::span<uint8_t> bytes) {
                copying = true;
                for (size_t q = k; q < m; q++)
                  CopyBlob(session, *want[q], name, bytes, want[q]->offset, "",
                           claims.Of(keep, *want[q]));
                copying = false;
              },
              &handed);
        });
      } catch (const Error& e) {
        // As below: a short or missing pack leaves its blobs to their other copies.
        if (copying || (e.code() != ErrorCode::kCorrupt && e.code() != ErrorCode::kNotFound)) throw;
        load_error = e.what();
      }
      for (size_t k = handed; k < ranges[r].last; k++)
        CopyBlob(session, *want[k], name, {}, 0, load_error, claims.Of(keep, *want[k]));
    });
    return;
  }
  reader.Read({FileType::kPack, name}, ranges,
              [&](size_t r, std::span<uint8_t> bytes, const Error* error) {
                if (error && error->code() != ErrorCode::kCorrupt &&
                    error->code() != ErrorCode::kNotFound)
                  throw *error;
                const std::string load_error = error ? error->what() : "";
                for (size_t k = ranges[r].first; k < ranges[r].last; k++)
                  CopyBlob(session, *want[k], name, bytes, ranges[r].offset, load_error,
                           claims.Of(keep, *want[k]));
              });
}

// (b) Copies the still-used blobs out of the repack packs; Flush writes the last new pack.
// The new packs go into the in-memory index only: RewriteIndex writes them with the rest
// right after. (restic writes an index file of the new packs here, which its rewrite then
// deletes: two requests each and one more round trip at the end.) Returns the number of
// packs written. `readers`: packs read at once (each pack's ranges in parallel on top).
uint64_t Repack(IndexedRepository& repo, const PrunePlan& plan, WriteOptions write, int readers) {
  const size_t packs_before = repo.index().PackCount();
  PackTable packs = PackTable::FromIndex(repo.index());
  write.write_index = false;
  WriteSession session(repo, write);
  RepackClaims claims(plan.keep);
  const RangeLimits split = RangeLimits::For(repo.backend());
  RangeReader reader(repo.backend(), repo.backend().Connections(), split.window());
  const int connections = repo.backend().Connections();
  std::optional<StreamSlots> streams;
  const int spare = std::max(1, session.uploads());
  if (repo.backend().RoundTrips() && connections > spare) streams.emplace(connections - spare);
  ParallelForEach(plan.repack.size(), readers, [&](size_t k) {
    RepackPack(session, reader, split, packs, plan.repack[k], plan.keep, claims,
               streams ? &*streams : nullptr);
  });
  session.Flush();
  const uint64_t written = repo.index().PackCount() - packs_before;
  if (uint64_t not_copied = claims.NotCopied())
    Fail(ErrorCode::kFatal, "internal error: " + std::to_string(not_copied) +
                                " blob(s) were not repacked; nothing was deleted");
  return written;
}

// (c) + (d) A complete new index without the packs about to go, then the old files.
void RewriteIndex(IndexedRepository& repo, const PrunePlan& plan, const PruneOptions& opts,
                  int threads, PruneResult& res) {
  std::unordered_set<PackId, IdHash> gone;
  for (const auto* v : {&plan.remove, &plan.repack, &plan.ignore})
    gone.insert(v->begin(), v->end());
  if (gone.empty() && !plan.rewrite_index) return;
  Progress(opts, "rebuilding index");
  std::vector<FileId> fresh;
  {
    ScopedTimer t(Stage::kIndexWrite);
    PackTable all = PackTable::FromIndex(repo.index());
    fresh = WriteIndexFiles(repo, all, [&](size_t i) { return !gone.contains(all.id(i)); },
                            threads);
  }
  res.index_files_written = fresh.size();
  std::unordered_set<FileId, IdHash> fresh_set(fresh.begin(), fresh.end());
  std::vector<RawId> old;
  for (const FileId& f : repo.index_files())
    if (!fresh_set.contains(f)) old.push_back(f);
  Progress(opts, "deleting obsolete index files");
  ScopedTimer t(Stage::kDelete);
  RemoveFiles(repo, FileType::kIndex, old, std::max(threads, repo.backend().Connections()), false,
              [&](const std::string& s) { Warn(opts, s); });
  res.index_files_removed = old.size();
}

}  // namespace

PruneResult ExecutePrune(IndexedRepository& repo, PrunePlan plan, const PruneOptions& opts) {
  PruneResult res;
  const int threads = Threads(repo, opts);
  // A removal is one round trip and no CPU: as many at once as the storage serves (S3: 5).
  const int removers = std::max(threads, repo.backend().Connections());
  auto warn = [&](const std::string& s) { Warn(opts, s); };
  if (opts.dry_run) {
    res.plan = std::move(plan);
    return res;
  }
  // (a) Packs no index refers to are garbage (the lock is exclusive, so no backup is
  // between writing a pack and its index).
  if (!plan.remove_first.empty()) {
    Progress(opts, "deleting unreferenced packs");
    ScopedTimer t(Stage::kDelete);
    res.remove_failures +=
        RemoveFiles(repo, FileType::kPack, Raw(plan.remove_first), removers, true, warn);
  }
  if (!plan.repack.empty()) {
    Progress(opts, "repacking packs");
    ScopedTimer t(Stage::kRepack);
    // Pack reads wait on storage: as many at once as its connections, at least (an
    // explicit --jobs is taken as it is).
    const int readers = opts.jobs > 0 ? threads : std::max(threads, repo.backend().Connections());
    res.packs_written = Repack(repo, plan, opts.write, readers);
  }
  RewriteIndex(repo, plan, opts, threads, res);
  // (e) Packs that no index lists any more.
  std::vector<RawId> doomed = Raw(plan.remove);
  doomed.insert(doomed.end(), plan.repack.begin(), plan.repack.end());
  if (!doomed.empty()) {
    Progress(opts, "removing " + std::to_string(doomed.size()) + " old packs");
    ScopedTimer t(Stage::kDelete);
    res.remove_failures += RemoveFiles(repo, FileType::kPack, doomed, removers, true, warn);
  }
  // (f) Temp files that a killed writer left (never listed, so never deleted above). A
  // day old at least: with the exclusive lock no writer of ours runs, but a writer that
  // lost its lock might still be finishing one.
  res.stale_temp_removed = repo.backend().RemoveStaleTempFiles(kStaleTempAge);
  if (res.stale_temp_removed)
    Progress(opts, "removed " + std::to_string(res.stale_temp_removed) +
                       " stale temporary files");
  Progress(opts, "done");
  res.plan = std::move(plan);
  return res;
}

PruneResult RunPrune(Repository& opened, const PruneOptions& opts,
                     const std::function<void(const PrunePlan&)>& on_plan) {
  ParseLimits(opened, opts);  // bad options are refused before the index is loaded
  Progress(opts, "loading indexes...");
  // The snapshots are listed and read beside the index load (neither needs the other, and
  // the lock is exclusive): over remote storage their round trips then cost no wall time.
  std::future<std::vector<UsedBlobsRoot>> roots =
      std::async(std::launch::async, [&] { return SnapshotRoots(opened, opts); });
  std::unique_ptr<IndexedRepository> repo;
  try {
    ScopedTimer t(Stage::kIndexLoad);
    repo = EarlyIndex::LoadWith(opts.early_index, opened);
  } catch (...) {
    if (opts.confirm_lock) opts.confirm_lock();  // a conflicting lock is the cause then
    throw;
  }
  if (opts.confirm_lock) opts.confirm_lock();
  PrunePlan plan = Plan(*repo, opts, [&] { return roots.get(); });
  if (on_plan) on_plan(plan);
  return ExecutePrune(*repo, std::move(plan), opts);
}

}  // namespace haven
