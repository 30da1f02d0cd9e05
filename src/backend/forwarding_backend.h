// The base of a decorator: every call is forwarded to the wrapped backend, so a decorator
// overrides only what it changes, and a method added to Backend reaches every decorator
// built on this (LoadInto in place, LoadStream, Connections, RemoveStaleTempFiles...). NewPackStream is
// the exception: it would bypass a decorator's Save, so each one that may stream says so.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace haven {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(std::shared_ptr<Backend> inner) : inner_(std::move(inner)) {}

  std::string Location() const override { return inner_->Location(); }
  bool Exists() override { return inner_->Exists(); }
  void Create() override { inner_->Create(); }
  void Save(const Handle& h, ByteView data) override { inner_->Save(h, data); }
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override {
    return inner_->Load(h, offset, length);
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    inner_->LoadInto(h, offset, out);
  }
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override {
    inner_->LoadStream(h, offset, length, sink);
  }
  std::optional<uint64_t> Stat(const Handle& h) override { return inner_->Stat(h); }
  std::optional<int64_t> ModTime(const Handle& h) override { return inner_->ModTime(h); }
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
    inner_->List(t, fn);
  }
  void Remove(const Handle& h) override { inner_->Remove(h); }
  int Connections() const override { return inner_->Connections(); }
  bool RoundTrips() const override { return inner_->RoundTrips(); }
  std::optional<std::vector<FileInfo>> EarlierListing(FileType t) override {
    return inner_->EarlierListing(t);
  }
  size_t RemoveStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->RemoveStaleTempFiles(min_age_seconds);
  }
  size_t CountStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->CountStaleTempFiles(min_age_seconds);
  }

 protected:
  const std::shared_ptr<Backend> inner_;
};

}  // namespace haven
