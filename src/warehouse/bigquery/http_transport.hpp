// HttpTransport: one HTTP request at a time over libcurl, for the BigQuery client and the credentials that feed it.
//
// Nothing here throws for a failed request: Send returns what happened as data (an HTTP status and body, or a
// transport failure), and the callers translate it in one place each. No URL, header or body is logged here.
// Thread-safety: immutable after construction; Send may be called from several threads (each call uses its own
// curl handle).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

struct HttpRequest {
  std::string method = "GET";  // GET, POST or DELETE
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent with POST
  // Zero: the transport's own. The metadata server, absent off Google Cloud, is asked with a short one.
  std::chrono::milliseconds connect_timeout{0};
  // Never through a proxy (libcurl otherwise honours HTTPS_PROXY / HTTP_PROXY / NO_PROXY): the metadata server is
  // only reachable directly. Loopback URLs are always sent directly.
  bool direct = false;
};

struct HttpResponse {
  long status = 0;  // 0 when no HTTP answer came (see `failure`)
  std::string body;
  enum class Failure { kNone, kConnect, kTimeout, kOther };
  Failure failure = Failure::kNone;
  std::string failure_message;  // curl's words for a transport failure

  bool answered() const { return failure == Failure::kNone; }
};

class HttpTransport {
 public:
  // `total_timeout` bounds a whole request; BigQuery's long polls answer within about 200 s.
  explicit HttpTransport(std::chrono::milliseconds connect_timeout = std::chrono::seconds(10),
                         std::chrono::milliseconds total_timeout = std::chrono::seconds(300));

  HttpResponse Send(const HttpRequest& request) const;

 private:
  std::chrono::milliseconds connect_timeout_;
  std::chrono::milliseconds total_timeout_;
};

// Percent-encodes everything but RFC 3986 unreserved characters: URL path segments, query values, form fields.
std::string UrlEncode(std::string_view text);

}  // namespace sluice
