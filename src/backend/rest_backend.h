// A repository behind restic's REST protocol (rest-server, `rclone serve restic`), v1 and
// v2, as restic speaks it (docs/backends.md, "REST"):
//
//   POST BASE/?create=true        create the repository's folders (init)
//   HEAD/GET/POST/DELETE BASE/config
//   HEAD/GET/POST/DELETE BASE/TYPE/NAME   TYPE = keys, locks, snapshots, index, data
//                                          (data is flat in the URL: BASE/data/NAME)
//   GET BASE/TYPE/                list: v2 `[{"name":..,"size":..}]` when the reply's
//                                 Content-Type is application/vnd.x.restic.rest.v2, else
//                                 v1 `["name", ..]` and a HEAD per name for its size
//
// Every request carries `Accept: application/vnd.x.restic.rest.v2`. Uploads are POSTs with
// the whole body; GETs of a range carry `Range: bytes=A-B`.
//
// Location: rest:http(s)://[USER:PASSWORD@]HOST[:PORT]/[PATH]. The user and password go into
// an `Authorization: Basic` header only: request URLs, Location() (`rest:http://USER:***@..`)
// and messages never contain the password.
//
// Save of a file named by its content's SHA-256 is one POST (a 403 alone makes it stat the
// file); any other name (the config) is stat'ed first, as rclone would overwrite it. An
// existing object of equal size is accepted, another size is kFatal. Remove is one DELETE
// (404, a missing object, is kNotFound). A listing is delivered only once it has been read
// and parsed whole; any error (a non-2xx reply, 404 included, a body that is not a listing)
// throws, never yields an empty list.
//
// Errors: HttpClient's mapping (transport failures, 5xx, 429 retryable kIo), with the REST
// server's own words: 401 "wrong user name or password", 403 "refused by the server
// (append-only mode?)", naming the object; kCorrupt for a short read. No retries here:
// the CLI wraps it in RetryBackend.
//
// The transport is an HttpClient; `transport_failure` (optional) explains a failed
// transfer (rclone's child exited: "rclone exited with status 1"): when it returns a
// reason the error is kIo, not retryable, with that reason.
//
// Thread safety: every method may run concurrently (no mutable state besides HttpClient).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backend/backend.h"
#include "backend/http_client.h"

namespace haven {

struct RestLocation {
  std::string base_url;  // scheme://host[:port]/path/ (always ends with '/'), no credentials
  std::string user;      // from the URL (percent-decoded); empty when none
  std::string password;
};

// Parses "rest:http(s)://..." (see above). kInvalidArgument for anything else; messages
// never repeat the password.
RestLocation ParseRestLocation(std::string_view location);

struct RestOptions {
  int connections = 5;
  std::string ca_file;  // PEM bundle for https; empty: curl's default
  std::string user, password;  // basic auth; none when both are empty
  // Location() text; empty: "rest:" + base URL (with "USER:***@" when a user is set).
  std::string display;
  HttpClientOptions http;  // max_connections and ca_file are set from the fields above
  std::function<std::optional<std::string>()> transport_failure;
  // Kept alive as long as the backend (after its HTTP connections are closed): the
  // process behind a pipe transport.
  std::shared_ptr<void> transport_owner;
};

class RestBackend : public Backend {
 public:
  RestBackend(std::string base_url, RestOptions options);

  std::string Location() const override;
  bool Exists() override;
  void Create() override;
  void Save(const Handle& h, ByteView data) override;
  void SaveFrom(const Handle& h, const SaveSource& src) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  // Streams the body as it arrives (not over rclone's --stdio pipe, whose one thread would
  // carry every caller's pieces: there the range is loaded whole).
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override;
  std::optional<uint64_t> Stat(const Handle& h) override;
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;
  int Connections() const override { return options_.connections; }
  bool RoundTrips() const override { return true; }

  // URL of h: BASE + "config" or BASE + TYPE/NAME.
  std::string UrlOf(const Handle& h) const;

 private:
  HttpResponse Send(HttpRequest req, const std::string& what);
  // Save's one body: `data`, or `src` when it is set (SaveFrom).
  void Post(const Handle& h, ByteView data, const SaveSource* src);
  // Throws the REST flavour of StatusError unless the status is 2xx.
  void Check(const HttpResponse& r, const std::string& what) const;
  HttpResponse GetRange(const Handle& h, uint64_t offset, uint64_t length,
                        std::optional<std::span<uint8_t>> into);

  const std::string base_;
  const RestOptions options_;
  std::string auth_header_;  // "Basic ..." or empty
  std::unique_ptr<HttpClient> http_;
};

}  // namespace haven
