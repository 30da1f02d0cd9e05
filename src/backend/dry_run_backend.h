// A decorator that reads through to another backend and silently drops every write and
// removal: `backup --dry-run` and `capture --dry-run` run the full pipeline without
// changing the repository. Lock files (FileType::kLock) are the exception: their saves and
// removals pass through, so a dry run takes and releases its lock like a real run (the CLI
// puts this decorator on when it opens the repository, before the lock is taken).
#pragma once

#include "backend/forwarding_backend.h"

namespace haven {

class DryRunBackend : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  void Create() override {}
  void Save(const Handle& h, ByteView data) override {
    if (h.type == FileType::kLock) ForwardingBackend::Save(h, data);
  }
  void Remove(const Handle& h) override {
    if (h.type == FileType::kLock) ForwardingBackend::Remove(h);
  }
  size_t RemoveStaleTempFiles(int64_t) override { return 0; }  // writes nothing
};

}  // namespace haven
