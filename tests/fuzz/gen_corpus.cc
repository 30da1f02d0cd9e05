// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/) with the
// project's own writers, deterministically (fixed keys, IVs, salts and times), so the
// output is stable and can be kept in git:
//
//   ninja -C build fuzz_corpus_gen && build/fuzz_corpus_gen tests/fuzz/corpus
//
// The fixed key (bytes 0x00..0x3f split as encrypt/mac.k/mac.r) is the one pack_fuzz.cc
// and unpacked_fuzz.cc use.
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/id.h"
#include "crypto/crypto_key.h"
#include "crypto/kdf.h"
#include "crypto/seal.h"
#include "repo/compress.h"
#include "repo/config.h"
#include "repo/index.h"
#include "repo/key_file.h"
#include "repo/node.h"
#include "repo/pack.h"
#include "repo/snapshot.h"

namespace {

using namespace haven;

std::filesystem::path g_root;

void Write(const std::string& target, const std::string& name, ByteView data) {
  auto dir = g_root / target;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  std::printf("%s/%s (%zu bytes)\n", target.c_str(), name.c_str(), data.size());
}
void Write(const std::string& target, const std::string& name, std::string_view text) {
  Write(target, name, AsBytes(text));
}

crypto::CryptoKey FixedKey() {
  Bytes dk(64);
  for (size_t i = 0; i < dk.size(); ++i) dk[i] = static_cast<uint8_t>(i);
  return crypto::CryptoKey::FromDerived(dk);
}

int g_iv_counter = 0;
Bytes NextIv() {
  Bytes iv(16, 0x10);
  iv[15] = static_cast<uint8_t>(++g_iv_counter);
  return iv;
}

BlobId IdOf(ByteView b) { return BlobId(Sha256(b)); }
BlobId Hex(std::string_view h) { return *BlobId::FromHex(h); }

Bytes Concat(std::initializer_list<ByteView> parts) {
  Bytes out;
  for (ByteView p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A zstd frame without the content size (decoded through the streaming path).
Bytes ZstdNoContentSize(ByteView data) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  Bytes out(ZSTD_compressBound(data.size()));
  size_t n = ZSTD_compress2(c, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(c);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

Node BaseNode(std::string name, NodeType type, uint32_t mode) {
  Node n;
  n.name = std::move(name);
  n.type = type;
  n.mode = mode;
  n.mtime = n.atime = n.ctime = {1795997717, 213751974, 0};
  n.user = n.group = "root";
  n.inode = 10970374;
  n.device_id = 65024;
  return n;
}

void Trees() {
  Node kat = BaseNode("d.txt", NodeType::kFile, 0644);
  kat.size = 5;
  kat.links = 1;
  kat.content = {Hex("64896f89fd11190013b70103e603a1c5826e56b7fb7d2197ab279b0690043599")};
  Write("tree", "kat_d_txt.json", EncodeTree({kat}));
  Write("tree", "empty.json", EncodeTree({}));

  std::vector<Node> nodes;
  Node bad = BaseNode("bad\xffx", NodeType::kFile, 0644);
  bad.links = 1;
  nodes.push_back(bad);
  Node link = BaseNode("badlink", NodeType::kSymlink, gomode::kSymlink | 0777);
  link.links = 1;
  link.linktarget = "tgt\xff\x08";
  nodes.push_back(link);
  Node dir = BaseNode("dir", NodeType::kDir, gomode::kDir | 0755);
  dir.subtree = kat.content[0];
  nodes.push_back(dir);
  Node dev = BaseNode("dev", NodeType::kCharDev, gomode::kDevice | gomode::kCharDevice | 0620);
  dev.device = 34817;
  dev.error = "lstat: permission denied";
  nodes.push_back(dev);
  Node fifo = BaseNode("fifo", NodeType::kFifo, gomode::kNamedPipe | 0644);
  nodes.push_back(fifo);
  Node x = BaseNode("hello.txt", NodeType::kFile, 0644 | gomode::kSetuid);
  x.size = 10;
  x.links = 2;
  x.xattrs = {{"user.test", "value1"}, {"user.bin", std::string("\x00\x01\x02\xff", 4)},
              {"user.null", std::nullopt}};
  x.generic_attributes = R"({"windows.creation_time":"AAECAwQFBgc=","windows.file_attributes":"IAAAAA=="})";
  x.content = {kat.content[0], kat.content[0]};
  x.mtime = {1795997717, 500000000, 5 * 3600 + 1800};
  nodes.push_back(x);
  Node odd = BaseNode("we\"ird\\\\name <&>\t\x01\xe2\x80\xa8\xc3\xa9.txt", NodeType::kFile, 0600);
  nodes.push_back(odd);
  std::sort(nodes.begin(), nodes.end(),
            [](const Node& a, const Node& b) { return a.name < b.name; });
  Write("tree", "shapes.json", EncodeTree(nodes));
  // rustic-style escaping and extra keys around "nodes".
  Write("tree", "rustic.json",
        R"({"x":1,"nodes":[{"name":"a\u0001b\\xffc","type":"file","mode":420,)"
        R"("mtime":"2024-01-02T03:04:06+01:00","atime":"2024-01-02T03:04:06.5-05:30",)"
        R"("ctime":"2024-01-02T03:04:06Z","uid":1000,"gid":100,"content":[]}],"y":null})");
}

void Packs() {
  const crypto::CryptoKey key = FixedKey();
  PackWriter w(BlobType::kData);
  const std::string text = "hello, world\nhello, world\nhello, world\n";
  const Bytes raw = {1, 2, 3, 4, 5, 6, 7, 8};
  w.Add(IdOf(AsBytes(text)), crypto::SealWithIv(key, NextIv(), ZstdCompress(AsBytes(text), 3)),
        static_cast<uint32_t>(text.size()));
  w.Add(IdOf(raw), crypto::SealWithIv(key, NextIv(), raw), 0);
  w.Add(IdOf({}), crypto::SealWithIv(key, NextIv(), {}), 0);
  std::vector<PackedBlob> blobs;
  Bytes pack = w.Finish(key, &blobs);
  // Finish seals the header with a random IV; re-seal it deterministically.
  const uint32_t hlen = GetU32Le(&pack[pack.size() - 4]);
  const size_t hstart = pack.size() - 4 - hlen;
  auto header = crypto::Open(key, ByteView(pack).subspan(hstart, hlen));
  Bytes sealed = crypto::SealWithIv(key, NextIv(), *header);
  std::copy(sealed.begin(), sealed.end(), pack.begin() + static_cast<ptrdiff_t>(hstart));
  Write("pack", "data_pack.bin", pack);

  // Tree pack with one compressed tree blob.
  const std::string tree = EncodeTree({});
  Bytes z = ZstdCompress(AsBytes(tree), 3);
  Bytes blob = crypto::SealWithIv(key, NextIv(), z);
  Bytes h;
  h.push_back(3);
  PutU32Le(h, static_cast<uint32_t>(blob.size()));
  PutU32Le(h, static_cast<uint32_t>(tree.size()));
  BlobId tid = IdOf(AsBytes(tree));
  h.insert(h.end(), tid.bytes.begin(), tid.bytes.end());
  Bytes hs = crypto::SealWithIv(key, NextIv(), h);
  Bytes tpack = Concat({blob, hs});
  PutU32Le(tpack, static_cast<uint32_t>(hs.size()));
  Write("pack", "tree_pack.bin", tpack);

  // An empty pack: sealed empty header and its length.
  Bytes empty = crypto::SealWithIv(key, NextIv(), {});
  PutU32Le(empty, static_cast<uint32_t>(empty.size()));
  Write("pack", "empty_pack.bin", empty);

  // Mode 3 of pack_fuzz: [u16 data length][plaintext header entries].
  Bytes m3 = {static_cast<uint8_t>(40 + 50 + 60), 0};
  auto entry = [&](uint8_t type, uint32_t len, uint32_t ulen, uint8_t fill) {
    m3.push_back(type);
    PutU32Le(m3, len);
    if (type >= 2) PutU32Le(m3, ulen);
    for (int i = 0; i < 32; ++i) m3.push_back(fill);
  };
  entry(0, 40, 0, 0x11);
  entry(3, 50, 100, 0x22);
  entry(1, 60, 0, 0x33);
  Write("pack", "header_entries.bin", m3);
}

void Indexes() {
  IndexFile f;
  f.packs.push_back(
      {*PackId::FromHex("da01fd0000000000000000000000000000000000000000000000000000000001"),
       {{BlobType::kData, Hex("efc7fb0000000000000000000000000000000000000000000000000000000002"),
         1944489, 4705577, 4705427},
        {BlobType::kData, Hex("64896f89fd11190013b70103e603a1c5826e56b7fb7d2197ab279b0690043599"),
         0, 37, 0}}});
  f.packs.push_back(
      {*PackId::FromHex("ab00000000000000000000000000000000000000000000000000000000000003"),
       {{BlobType::kTree, Hex("62b2d082392ea017dfb5312299675ee837700ce91c59283205a18cfb731a78eb"),
         0, 253, 355}}});
  Write("index", "index.json", f.ToJson());
  const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
  Write("index", "old_array.json",
        "[{\"id\":\"" + a + "\",\"blobs\":[{\"id\":\"" + b +
            "\",\"type\":\"tree\",\"offset\":0,\"length\":99}]}]");
  Write("index", "supersedes_rustic.json",
        "{\"supersedes\":[\"" + c + "\"],\"packs\":[{\"id\":\"" + a +
            "\",\"time\":\"2024-01-02T03:04:06Z\",\"size\":1234,\"blobs\":[{\"id\":\"" + b +
            "\",\"type\":\"data\",\"offset\":7,\"length\":40,\"uncompressed_length\":8}]}],"
            "\"packs_to_delete\":[]}\n");
  Write("index", "null_packs.json", "{\"packs\":null}");
}

void Snapshots() {
  Write("snapshot", "restic014.json",
        R"({"time":"2026-11-29T19:16:30.528938612-05:00","parent":")" + std::string(64, 'b') +
            R"(","tree":")" + std::string(64, '2') +
            R"(","paths":["/data/src2"],"hostname":"h2","username":"root"})");
  Snapshot s;
  s.time = {1795997717, 213751974, 5 * 3600 + 1800};
  s.tree = Hex("62b2d082392ea017dfb5312299675ee837700ce91c59283205a18cfb731a78eb");
  s.parent = *FileId::FromHex(std::string(64, 'c'));
  s.original = *FileId::FromHex(std::string(64, 'd'));
  s.paths = {"/home/me/work", "/etc/<x>&\"y\""};
  s.hostname = "vm";
  s.username = "root";
  s.uid = 1000;
  s.gid = 100;
  s.excludes = {"*.o", "/tmp"};
  s.tags = {"daily", "t\xc3\xa9st"};
  s.program_version = "restic 0.17.0";
  s.summary =
      R"({"backup_start":"2026-11-30T00:15:17Z","backup_end":"2026-11-30T00:15:19Z",)"
      R"("files_new":1,"files_changed":0,"files_unmodified":0,"dirs_new":1,"dirs_changed":0,)"
      R"("dirs_unmodified":0,"data_blobs":1,"tree_blobs":2,"data_added":5,)"
      R"("data_added_packed":37,"total_files_processed":1,"total_bytes_processed":5})";
  Write("snapshot", "full.json", s.ToJson());
}

void Keys() {
  const crypto::CryptoKey master = FixedKey();
  KeyFile k;
  k.created = "2026-11-30T00:15:19.538865235Z";
  k.username = "root";
  k.hostname = "vm";
  k.params = {1024, 8, 1};
  k.salt.resize(64);
  for (size_t i = 0; i < 64; ++i) k.salt[i] = static_cast<uint8_t>(i);
  Bytes dk = crypto::Scrypt("geheim", k.salt, k.params, 64, 1);
  k.data = crypto::SealWithIv(crypto::CryptoKey::FromDerived(dk), NextIv(),
                              AsBytes(MasterKeyToJson(master)));
  Write("keyfile", "key.json", k.ToJson());
  Write("keyfile", "masterkey.json", MasterKeyToJson(master));
  KeyFile big = k;
  big.params = {32768, 8, 6};
  Write("keyfile", "restic_params.json", big.ToJson());
}

void Configs() {
  Write("config", "v2.json",
        R"({"version":2,"id":"f4fbe3a039e08f03920405e7e20c12845aa42348b6a312aa5a4f350914923ead",)"
        R"("chunker_polynomial":"343fe6ff031a63"})");
  Write("config", "v1.json",
        R"({"version":1,"id":")" + std::string(64, 'a') +
            R"(","chunker_polynomial":"3DA3358B4DC173","chunker":"rabin","is_hot":false})");
  Write("config", "v3.json",
        R"({"version":3,"id":")" + std::string(64, 'a') + R"(","chunker_polynomial":"3da3358b4dc173"})");
}

void GoJson() {
  const char* const names[] = {"bad\\xffx", "bell\\ax", "caf\xc3\xa9", "ctl\\x01x", "del\\x7fx",
                               "emoji\xf0\x9f\x98\x80", "ls\\u2028x", "nbsp\\u00a0x",
                               "shy\\u00adx", "tab\\tname", "we\\\"ird\\\\\\\\name <&>.txt",
                               "oct\\101\\377", "big\\U0001f600"};
  int i = 0;
  for (const char* n : names) Write("gojson", "name" + std::to_string(i++), std::string(n));
  const char* const times[] = {"2026-11-30T00:15:19.977915833Z",
                               "2026-11-30T05:46:29.837161425+05:30",
                               "2024-01-02T03:04:06+01:00", "0000-01-01T00:00:00-23:59",
                               "9999-12-31T23:59:59.999999999999Z", "2024-02-29T12:00:00.5Z"};
  i = 0;
  for (const char* t : times) Write("gojson", "time" + std::to_string(i++), std::string(t));
  Write("gojson", "raw_invalid_utf8", std::string("a\xff\xc0\x80\xed\xa0\x80z", 8));
}

void Unpacked() {
  const crypto::CryptoKey key = FixedKey();
  const std::string json = R"({"time":"2026-11-30T00:16:15.727379653Z","exclusive":false,)"
                           R"("hostname":"vm","username":"root","pid":25858})";
  const Bytes z = ZstdCompress(AsBytes(json), 3);
  const Bytes payload = Concat({Bytes{2}, z});
  Write("unpacked", "m0_sealed_v2.bin",
        Concat({Bytes{0}, crypto::SealWithIv(key, NextIv(), payload)}));
  Write("unpacked", "m1_v2_payload.bin", Concat({Bytes{1}, payload}));
  Write("unpacked", "m1_raw_json.bin", Concat({Bytes{1}, AsBytes(json)}));
  Write("unpacked", "m1_streaming.bin",
        Concat({Bytes{1, 2}, ZstdNoContentSize(AsBytes(json))}));
  Bytes len;
  PutU32Le(len, static_cast<uint32_t>(json.size()));
  Write("unpacked", "m2_blob.bin", Concat({Bytes{2}, len, z}));
  Write("unpacked", "m2_blob_unknown_size.bin",
        Concat({Bytes{2, 0, 0, 0, 0}, ZstdNoContentSize(AsBytes(json))}));
  Write("unpacked", "m3_sealed_roundtrip.bin", Concat({Bytes{3}, payload}));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s tests/fuzz/corpus\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  Trees();
  Packs();
  Indexes();
  Snapshots();
  Keys();
  Configs();
  GoJson();
  Unpacked();
  return 0;
}
