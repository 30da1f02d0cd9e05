#include "backend/fault_backend.h"

#include <utility>

namespace haven {

const char* OpName(FaultBackend::Op op) {
  switch (op) {
    case FaultBackend::Op::kExists:
      return "exists";
    case FaultBackend::Op::kCreate:
      return "create";
    case FaultBackend::Op::kSave:
      return "save";
    case FaultBackend::Op::kLoad:
      return "load";
    case FaultBackend::Op::kStat:
      return "stat";
    case FaultBackend::Op::kList:
      return "list";
    case FaultBackend::Op::kRemove:
      return "remove";
  }
  return "unknown";
}

FaultBackend::FaultBackend(std::shared_ptr<Backend> inner) : inner_(std::move(inner)) {}

void FaultBackend::AddRule(const Rule& r) {
  MutexLock lock(mu_);
  rules_.push_back(r);
}

void FaultBackend::FailNext(Op op, int times, bool retryable, ErrorCode code,
                            std::optional<FileType> type) {
  AddRule(Rule{Kind::kFailBefore, op, times, retryable, code, type, 0, 0});
}

void FaultBackend::FailNextAfterInner(Op op, int times) {
  AddRule(Rule{Kind::kFailAfter, op, times, true, ErrorCode::kIo, std::nullopt, 0, 0});
}

void FaultBackend::FailNth(uint64_t seq, bool retryable) {
  AddRule(Rule{Kind::kFailNth, Op::kExists, 1, retryable, ErrorCode::kIo, std::nullopt, seq, 0});
}

void FaultBackend::FailFrom(uint64_t seq) {
  AddRule(Rule{Kind::kFailFrom, Op::kExists, kAlways, false, ErrorCode::kIo, std::nullopt, seq, 0});
}

void FaultBackend::TruncateLoads(uint64_t keep, int times, std::optional<FileType> type) {
  AddRule(Rule{Kind::kTruncate, Op::kLoad, times, false, ErrorCode::kIo, type, keep, 0});
}

void FaultBackend::FlipLoadedByte(int64_t index, int times, std::optional<FileType> type) {
  AddRule(Rule{Kind::kFlip, Op::kLoad, times, false, ErrorCode::kIo, type, 0, index});
}

void FaultBackend::FailListAfter(uint64_t entries, int times, bool retryable) {
  AddRule(Rule{Kind::kListAfter, Op::kList, times, retryable, ErrorCode::kIo, std::nullopt, entries,
               0});
}

void FaultBackend::SetHook(std::function<void(Op, uint64_t)> hook) {
  MutexLock lock(mu_);
  hook_ = std::move(hook);
}

void FaultBackend::ClearFaults() {
  MutexLock lock(mu_);
  rules_.clear();
  hook_ = nullptr;
}

std::optional<FaultBackend::Rule> FaultBackend::Take(Kind kind, Op op,
                                                     std::optional<FileType> type) {
  MutexLock lock(mu_);
  for (auto it = rules_.begin(); it != rules_.end(); ++it) {
    if (it->kind != kind || it->op != op) continue;
    if (it->type && type != it->type) continue;
    Rule r = *it;
    if (it->times > 0 && --it->times == 0) rules_.erase(it);
    return r;
  }
  return std::nullopt;
}

void FaultBackend::Throw(const Rule& r, Op op, const std::string& detail) {
  Fail(r.code, std::string("injected fault: ") + OpName(op) + " " + detail, r.retryable);
}

void FaultBackend::Begin(Op op, std::optional<FileType> type) {
  counts_[static_cast<int>(op)].fetch_add(1);
  const uint64_t seq = total_.fetch_add(1) + 1;
  std::function<void(Op, uint64_t)> hook;
  std::optional<Rule> by_seq;
  {
    MutexLock lock(mu_);
    hook = hook_;
    for (auto it = rules_.begin(); it != rules_.end(); ++it) {
      if ((it->kind == Kind::kFailNth && it->param == seq) ||
          (it->kind == Kind::kFailFrom && seq >= it->param)) {
        by_seq = *it;
        if (it->kind == Kind::kFailNth) rules_.erase(it);
        break;
      }
    }
  }
  if (hook) hook(op, seq);
  const std::string detail = "(call " + std::to_string(seq) + ")";
  if (by_seq) Throw(*by_seq, op, detail);
  if (auto r = Take(Kind::kFailBefore, op, type)) Throw(*r, op, detail);
}

void FaultBackend::MaybeFailAfter(Op op, std::optional<FileType> type) {
  if (auto r = Take(Kind::kFailAfter, op, type)) Throw(*r, op, "(reply lost after success)");
}

bool FaultBackend::Exists() {
  Begin(Op::kExists, FileType::kConfig);
  bool result = inner_->Exists();
  MaybeFailAfter(Op::kExists, FileType::kConfig);
  return result;
}

void FaultBackend::Create() {
  Begin(Op::kCreate, std::nullopt);
  inner_->Create();
  MaybeFailAfter(Op::kCreate, std::nullopt);
}

void FaultBackend::Save(const Handle& h, ByteView data) {
  Begin(Op::kSave, h.type);
  inner_->Save(h, data);
  MaybeFailAfter(Op::kSave, h.type);
}

Bytes FaultBackend::Load(const Handle& h, uint64_t offset, uint64_t length) {
  Begin(Op::kLoad, h.type);
  Bytes out = inner_->Load(h, offset, length);
  MaybeFailAfter(Op::kLoad, h.type);
  if (auto r = Take(Kind::kTruncate, Op::kLoad, h.type)) {
    if (out.size() > r->param) out.resize(r->param);
  }
  if (auto r = Take(Kind::kFlip, Op::kLoad, h.type)) {
    const int64_t size = static_cast<int64_t>(out.size());
    const int64_t i = r->index < 0 ? size + r->index : r->index;
    if (i >= 0 && i < size) out[static_cast<size_t>(i)] ^= 0xff;
  }
  return out;
}

std::optional<uint64_t> FaultBackend::Stat(const Handle& h) {
  Begin(Op::kStat, h.type);
  auto result = inner_->Stat(h);
  MaybeFailAfter(Op::kStat, h.type);
  return result;
}

void FaultBackend::List(FileType t, const std::function<void(const FileInfo&)>& fn) {
  Begin(Op::kList, t);
  std::optional<Rule> r = Take(Kind::kListAfter, Op::kList, t);
  if (!r) {
    inner_->List(t, fn);
    MaybeFailAfter(Op::kList, t);
    return;
  }
  uint64_t delivered = 0;
  auto detail = [&] { return "after " + std::to_string(delivered) + " entries"; };
  inner_->List(t, [&](const FileInfo& fi) {
    if (delivered == r->param) Throw(*r, Op::kList, detail());
    ++delivered;
    fn(fi);
  });
  Throw(*r, Op::kList, detail());  // a listing shorter than `entries` fails at its end
}

void FaultBackend::Remove(const Handle& h) {
  Begin(Op::kRemove, h.type);
  inner_->Remove(h);
  MaybeFailAfter(Op::kRemove, h.type);
}

}  // namespace haven
