// A decorator that reads through to another backend and silently drops every write and
// removal: `backup --dry-run` runs the full pipeline without changing the repository.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace haven {

class DryRunBackend : public Backend {
 public:
  explicit DryRunBackend(std::shared_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string Location() const override { return inner_->Location(); }
  bool Exists() override { return inner_->Exists(); }
  void Create() override {}
  void Save(const Handle&, ByteView) override {}
  Bytes Load(const Handle& h, uint64_t offset, uint64_t length) override {
    return inner_->Load(h, offset, length);
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    inner_->LoadInto(h, offset, out);
  }
  std::optional<uint64_t> Stat(const Handle& h) override { return inner_->Stat(h); }
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
    inner_->List(t, fn);
  }
  void Remove(const Handle&) override {}
  int Connections() const override { return inner_->Connections(); }
  size_t RemoveStaleTempFiles(int64_t) override { return 0; }  // writes nothing

 private:
  std::shared_ptr<Backend> inner_;
};

}  // namespace haven
