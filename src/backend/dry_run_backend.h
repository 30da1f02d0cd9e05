// A decorator that reads through to another backend and silently drops every write and
// removal: `backup --dry-run` runs the full pipeline without changing the repository.
#pragma once

#include "backend/forwarding_backend.h"

namespace haven {

class DryRunBackend : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  void Create() override {}
  void Save(const Handle&, ByteView) override {}
  void Remove(const Handle&) override {}
  size_t RemoveStaleTempFiles(int64_t) override { return 0; }  // writes nothing
};

}  // namespace haven
