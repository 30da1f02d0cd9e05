// One file's content blobs read ahead on worker threads and handed over in file order
// (`box cat`, `dump`, `cat`-like writers to one stream). Each worker loads a blob into a
// recycled buffer (IndexedRepository::LoadBlobInto: no allocation or zero-fill per blob);
// at most 2 x jobs blobs are read ahead of the one being handed over, so memory stays
// bounded (about 2 x jobs x the largest blob) whatever the file's size.
#pragma once

#include <functional>
#include <vector>

#include "core/bytes.h"
#include "repo/indexed_repository.h"

namespace haven {

// Calls sink(plaintext) for every blob of `content`, in order, on the calling thread. The
// view is valid during the call only. jobs <= 1, or a file of one blob, reads on the calling
// thread. The first error (naming the blob, as LoadBlob's) is thrown after the blobs before
// it were handed over; nothing after it is.
void ForEachBlobInOrder(IndexedRepository& repo, const std::vector<BlobId>& content, int jobs,
                        const std::function<void(ByteView)>& sink);

}  // namespace haven
