#include "repo/blob_stream.h"

#include <atomic>
#include <deque>
#include <future>
#include <memory>

#include "core/huge_buffer.h"
#include "core/huge_buffer_pool.h"
#include "core/thread_pool.h"

namespace haven {

namespace {

struct Loaded {
  std::unique_ptr<HugeBuffer> buffer;
  ByteView plain;
};

}  // namespace

void ForEachBlobInOrder(IndexedRepository& repo, const std::vector<BlobId>& content, int jobs,
                        const std::function<void(ByteView)>& sink) {
  if (jobs <= 1 || content.size() <= 1) {
    HugeBuffer buf;
    for (const BlobId& id : content) sink(repo.LoadBlobInto(BlobType::kData, id, buf));
    return;
  }
  // Declared so that the pool is destroyed first: on an error (a blob's, or the sink's)
  // its destructor finishes the jobs still queued, which use `load` and `buffers`; their
  // results are dropped with `pending`.
  HugeBufferPool buffers;  // shared by the workers and the handing-over thread
  // Set when the loop ends early (a load's or the sink's error): the loads still queued
  // are skipped instead of read (over remote storage, each might retry for minutes).
  std::atomic<bool> stop{false};
  auto load = [&repo, &buffers, &stop](const BlobId& id) {
    if (stop.load(std::memory_order_relaxed)) return Loaded{};
    Loaded l{buffers.Take(), {}};
    l.plain = repo.LoadBlobInto(BlobType::kData, id, *l.buffer);
    return l;
  };
  const size_t ahead = static_cast<size_t>(jobs) * 2;
  std::deque<std::future<Loaded>> pending;
  ThreadPool pool(jobs, ahead);
  struct StopOnExit {
    std::atomic<bool>& stop;
    ~StopOnExit() { stop.store(true, std::memory_order_relaxed); }
  } stop_on_exit{stop};
  size_t next = 0;
  while (next < content.size() || !pending.empty()) {
    while (next < content.size() && pending.size() < ahead) {
      const BlobId& id = content[next++];
      pending.push_back(pool.Submit([&load, &id] { return load(id); }));
    }
    Loaded l = pending.front().get();
    pending.pop_front();
    sink(l.plain);
    buffers.Put(std::move(l.buffer));
  }
}

}  // namespace haven
