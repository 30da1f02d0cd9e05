#include "backend/kill_backend.h"

#include <csignal>
#include <unistd.h>

#include <functional>
#include <utility>

namespace haven {

void KillBackend::Count(const Handle& h) {
  if (h.type == FileType::kLock) return;
  if (done_.fetch_add(1) >= ops_) {
    ::kill(::getpid(), SIGKILL);
    for (;;) ::pause();
  }
}

void KillBackend::Save(const Handle& h, ByteView data) {
  Count(h);
  inner_->Save(h, data);
}

void KillBackend::SaveFrom(const Handle& h, const SaveSource& src) {
  Count(h);
  inner_->SaveFrom(h, src);
}

namespace {

class CountedPackStream : public PackStream {
 public:
  CountedPackStream(std::unique_ptr<PackStream> inner, std::function<void(const Handle&)> count)
      : inner_(std::move(inner)), count_(std::move(count)) {}
  void Append(ByteView data) override { inner_->Append(data); }
  void Commit(const std::string& name) override {
    count_(Handle{FileType::kPack, name});
    inner_->Commit(name);
  }

 private:
  std::unique_ptr<PackStream> inner_;
  std::function<void(const Handle&)> count_;
};

}  // namespace

std::unique_ptr<PackStream> KillBackend::NewPackStream() {
  auto inner = inner_->NewPackStream();
  if (!inner) return nullptr;
  return std::make_unique<CountedPackStream>(std::move(inner),
                                             [this](const Handle& h) { Count(h); });
}

void KillBackend::Remove(const Handle& h) {
  Count(h);
  inner_->Remove(h);
}

}  // namespace haven
