// The upload side of a WriteSession (restic's packer_uploader): full packs are hashed,
// saved and indexed on one upload thread while the workers go on compressing. At most
// kMaxUploads packs are uploading at once; the next full pack waits (back-pressure), so
// memory stays at about (kMaxUploads + open packs) * pack size. Emptied pack buffers (up
// to two) are kept for the next packs: no fresh 16 MiB allocation and its page faults.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "core/bytes.h"
#include "core/mutex.h"
#include "core/thread_pool.h"
#include "repo/pack.h"

namespace haven {

class PackUploader {
 public:
  static constexpr int kMaxUploads = 1;
  // Saves one finished pack (hash, backend write, index); runs on the upload thread. It
  // may leave `pack` in any state: its buffer is recycled afterwards.
  using SaveFn = std::function<void(Bytes& pack, std::vector<PackedBlob> blobs)>;

  explicit PackUploader(SaveFn save);
  // Waits for the queued uploads (errors are dropped: Wait reports them).
  ~PackUploader() = default;

  // An emptied pack buffer for the next PackWriter, or an empty one.
  Bytes TakeBuffer();
  // Hands a full pack to the upload thread once fewer than kMaxUploads are running;
  // rethrows an earlier upload's error instead.
  void Upload(Bytes pack, std::vector<PackedBlob> blobs);
  // Waits until no upload is queued or running; rethrows the first upload error.
  void Wait();

 private:
  void Run(Bytes& pack, std::vector<PackedBlob> blobs);

  SaveFn save_;
  Mutex mu_;
  CondVar done_;  // an upload finished
  size_t pending_ GUARDED_BY(mu_) = 0;
  std::exception_ptr error_ GUARDED_BY(mu_);
  std::vector<Bytes> free_ GUARDED_BY(mu_);
  // Declared last: destroyed (queued uploads finished, thread joined) first.
  ThreadPool pool_{kMaxUploads, 1};
};

}  // namespace haven
