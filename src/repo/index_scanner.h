// The fast reader of index files (docs/format.md §8) in the layout restic and haven write,
// without whitespace:
//   {"packs":[{"id":"<64 hex>","blobs":[{"id":"<64 hex>","type":"data|tree","offset":N,
//   "length":N[,"uncompressed_length":N]},...]},...][,"supersedes":[...]]}\n?
// A strict scanner that keeps no parse tree and reports what it reads to a visitor
// (Pack(id), then Blob(blob) for each of its blobs; Supersedes(id)). The text comes
// whole or in pieces from a reader (a decompressing stream), through a small window, so
// a 20 MB index file never needs to be in memory at once. Anything else (other field
// order, spaces, escapes, a truncated text) makes Run return false, possibly after some
// calls to the visitor: the caller then discards them and uses the general parser
// (IndexFile::Parse), which also produces the error messages.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>

#include "core/bytes.h"
#include "core/id.h"
#include "repo/pack.h"

namespace haven {

class IndexScanner {
 public:
  // Reads up to cap bytes of the text into dst; 0 at the end.
  using Reader = std::function<size_t(char* dst, size_t cap)>;

  explicit IndexScanner(std::string_view whole)
      : p_(whole.data()), end_(whole.data() + whole.size()), eof_(true) {}
  explicit IndexScanner(Reader read, size_t window = 256 * 1024)
      : read_(std::move(read)), buf_(new char[window]), cap_(window), p_(buf_.get()),
        end_(buf_.get()) {}

  // V: void Pack(const PackId&); void Blob(const PackedBlob&); void Supersedes(const RawId&).
  template <typename V>
  bool Run(V& v) {
    Fill();
    if (!Lit("{\"packs\":[")) return false;
    if (Lit("]")) return Tail(v);
    for (;;) {
      Fill();
      PackId pack;
      if (!Lit("{\"id\":") || !Id(pack) || !Lit(",\"blobs\":[")) return false;
      v.Pack(pack);
      if (!Lit("]")) {
        for (;;) {
          Fill();
          PackedBlob b;
          uint64_t off, len, ulen = 0;
          if (!Lit("{\"id\":") || !Id(b.id) || !Lit(",\"type\":\"")) return false;
          if (Lit("data\"")) {
            b.type = BlobType::kData;
          } else if (Lit("tree\"")) {
            b.type = BlobType::kTree;
          } else {
            return false;
          }
          if (!Lit(",\"offset\":") || !Num(off) || !Lit(",\"length\":") || !Num(len)) return false;
          if (Lit(",\"uncompressed_length\":") && !Num(ulen)) return false;
          if (!Lit("}")) return false;
          if (off > 0xffffffffull || len > 0xffffffffull || ulen > 0xffffffffull || len < 32)
            return false;  // the general parser names the blob
          b.offset = static_cast<uint32_t>(off);
          b.length = static_cast<uint32_t>(len);
          b.uncompressed_length = static_cast<uint32_t>(ulen);
          v.Blob(b);
          if (Lit("]")) break;
          if (!Lit(",")) return false;
        }
      }
      if (!Lit("}")) return false;
      if (Lit("]")) return Tail(v);
      if (!Lit(",")) return false;
    }
  }

 private:
  // Every token sequence read between two Fill calls is shorter than this (a blob entry
  // with 19-digit numbers is ~190 bytes).
  static constexpr size_t kMaxItem = 512;

  // Makes at least kMaxItem bytes readable unless the text ends sooner.
  void Fill() {
    if (eof_ || static_cast<size_t>(end_ - p_) >= kMaxItem) return;
    const size_t keep = static_cast<size_t>(end_ - p_);
    std::memmove(buf_.get(), p_, keep);
    p_ = buf_.get();
    end_ = p_ + keep;
    while (!eof_ && static_cast<size_t>(end_ - p_) < cap_) {
      size_t n = read_(const_cast<char*>(end_), cap_ - static_cast<size_t>(end_ - p_));
      if (n == 0) eof_ = true;
      end_ += n;
    }
  }
  template <typename V>
  bool Tail(V& v) {
    Fill();
    if (Lit(",\"supersedes\":[") && !Lit("]")) {
      for (;;) {
        Fill();
        RawId id;
        if (!Id(id)) return false;
        v.Supersedes(id);
        if (Lit("]")) break;
        if (!Lit(",")) return false;
      }
    }
    Fill();
    if (!Lit("}")) return false;
    if (p_ < end_ && *p_ == '\n') ++p_;
    Fill();
    return p_ == end_ && eof_;
  }
  bool Lit(std::string_view s) {
    if (static_cast<size_t>(end_ - p_) < s.size() || std::memcmp(p_, s.data(), s.size()) != 0)
      return false;
    p_ += s.size();
    return true;
  }
  bool Num(uint64_t& v) {
    const char* start = p_;
    v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9' && p_ - start < 19) v = v * 10 + uint64_t(*p_++ - '0');
    if (p_ == start || (p_ - start > 1 && *start == '0')) return false;
    return p_ == end_ || *p_ < '0' || *p_ > '9';
  }
  template <typename IdT>
  bool Id(IdT& id) {
    if (end_ - p_ < 66 || p_[0] != '"' || p_[65] != '"' ||
        !HexDecodeInto(std::string_view(p_ + 1, 64), id.bytes.data(), 32))
      return false;
    p_ += 66;
    return true;
  }

  Reader read_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  const char* p_;
  const char* end_;
  bool eof_ = false;
};

}  // namespace haven
