// Tests only: the one-object repository most unit tests were written against, put
// together from the split roles: an opened Repository, the IndexedRepository loaded from
// it and a WriteSession on that. Saves go to the session, index reads to the indexed
// repository, the rest to the opened one. The index starts empty, as the single object's
// did; LoadIndex() loads it (and starts a new session: flush first). Passing it as a Repository& (RunCheck, RunPrune, Lock::Acquire, ...)
// makes the next index access load the index again, as those calls used to reload the
// single object's index.
#pragma once

#include <memory>
#include <string_view>

#include "backend/forwarding_backend.h"
#include "repo/indexed_repository.h"
#include "repo/repository.h"
#include "repo/write_session.h"

namespace haven::testing {

class TestRepository {
 public:
  static std::unique_ptr<TestRepository> Open(std::shared_ptr<Backend> be,
                                              std::string_view password, int threads,
                                              std::string_view key_hint = {}) {
    std::unique_ptr<TestRepository> r(new TestRepository());
    r->opened_ = Repository::Open(be, password, threads, key_hint);
    // As the single object started: an empty index until LoadIndex() (the same repository
    // opened a second time through a view that lists no index files).
    auto unindexed = Repository::Open(std::make_shared<NoIndexFiles>(std::move(be)), password,
                                      threads, key_hint);
    r->indexed_ = IndexedRepository::Load(*unindexed);
    r->session_ = std::make_unique<WriteSession>(*r->indexed_, r->write_);
    return r;
  }

  Repository& opened() { return *opened_; }
  IndexedRepository& indexed() {
    if (stale_) LoadIndex();
    return *indexed_;
  }
  WriteSession& session() {
    if (stale_) LoadIndex();
    return *session_;
  }
  operator Repository&() {
    stale_ = true;
    return *opened_;
  }
  operator IndexedRepository&() { return indexed(); }
  operator WriteSession&() { return session(); }

  void LoadIndex() {
    session_.reset();
    indexed_.reset();
    indexed_ = IndexedRepository::Load(*opened_);
    session_ = std::make_unique<WriteSession>(*indexed_, write_);
    stale_ = false;
  }
  // The write options take effect for a new session: call before saving.
  void set_pack_size(size_t bytes) {
    write_.pack_size = bytes;
    session_ = std::make_unique<WriteSession>(*indexed_, write_);
  }
  void set_compression(Compression c) {
    write_.compression = c;
    session_ = std::make_unique<WriteSession>(*indexed_, write_);
  }

  // The opened repository.
  Backend& backend() { return opened_->backend(); }
  std::shared_ptr<Backend> backend_ptr() { return opened_->backend_ptr(); }
  const RepoConfig& config() const { return opened_->config(); }
  const crypto::CryptoKey& key() const { return opened_->key(); }
  const FileId& key_id() const { return opened_->key_id(); }
  const chunker::Tables& chunker_tables() const { return opened_->chunker_tables(); }
  int threads() const { return opened_->threads(); }
  FileId SaveJson(FileType t, std::string_view json) { return opened_->SaveJson(t, json); }
  Bytes EncodeJson(std::string_view json) { return opened_->EncodeJson(json); }
  FileId SaveJsonPieces(FileType t, const Repository::JsonPieces& emit) {
    return opened_->SaveJsonPieces(t, emit);
  }
  std::string DecodeUnpacked(ByteView stored, const std::string& what) {
    return opened_->DecodeUnpacked(stored, what);
  }
  std::string LoadJson(FileType t, const FileId& id) { return opened_->LoadJson(t, id); }
  std::vector<FileId> ListIds(FileType t) { return opened_->ListIds(t); }
  std::vector<std::pair<FileId, Snapshot>> LoadSnapshots(
      std::vector<Repository::SnapshotFailure>* failures = nullptr) {
    return opened_->LoadSnapshots(failures);
  }
  void set_warn(std::function<void(const std::string&)> fn) { opened_->set_warn(std::move(fn)); }
  void set_lock_check(std::function<void()> fn) { opened_->set_lock_check(std::move(fn)); }
  void CheckLock() { opened_->CheckLock(); }
  Bytes DecodeBlob(const BlobId& id, ByteView sealed, uint32_t ulen, const std::string& pack) {
    return opened_->DecodeBlob(id, sealed, ulen, pack);
  }

  // The indexed repository.
  const Index& index() { return indexed().index(); }
  const std::vector<FileId>& index_files() { return indexed().index_files(); }
  Bytes LoadBlob(BlobType t, const BlobId& id) { return indexed().LoadBlob(t, id); }
  std::vector<Node> LoadTree(const BlobId& id) { return indexed().LoadTree(id); }
  bool IsTreePack(const PackId& p) { return indexed().IsTreePack(p); }
  void CompactIndex() { indexed().CompactIndex(); }

  // The write session.
  bool SaveBlob(BlobType t, const BlobId& id, ByteView plain) {
    return session().SaveBlob(t, id, plain);
  }
  bool SaveBlobCopy(BlobType t, const BlobId& id, ByteView plain, ByteView sealed,
                    uint32_t ulen) {
    return session().SaveBlobCopy(t, id, plain, sealed, ulen);
  }
  bool HasBlob(BlobType t, const BlobId& id) { return session().HasBlob(t, id); }
  void Flush() { session().Flush(); }
  const SaveStats& stats() { return session().stats(); }

 private:
  // Lists no index files: the first IndexedRepository starts empty.
  class NoIndexFiles : public ForwardingBackend {
   public:
    using ForwardingBackend::ForwardingBackend;
    void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
      if (t != FileType::kIndex) ForwardingBackend::List(t, fn);
    }
  };
  TestRepository() = default;

  WriteOptions write_;
  std::unique_ptr<Repository> opened_;
  std::unique_ptr<IndexedRepository> indexed_;
  std::unique_ptr<WriteSession> session_;  // after indexed_: destroyed first
  bool stale_ = false;
};

}  // namespace haven::testing
