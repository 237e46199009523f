// HTTP(S) requests for the object-store drivers, over libcurl (Debian's
// libcurl4-openssl-dev): one connection per thread kept alive between
// requests, timeouts, and retries with exponential backoff and jitter on
// what a store answers when it is busy or briefly down -- a dropped or
// refused connection, a body cut short, 408, 429, 500, 502, 503, 504 --
// as Google's and AWS's client libraries retry. Framework-free.
//
// Settings (environment, read once):
//   T5XX_STORAGE_RETRY_SECONDS  total time one request may spend retrying
//                               (default 300)
//   T5XX_STORAGE_MAX_ATTEMPTS   attempts per request (default 12)
//   T5XX_STORAGE_TIMEOUT_SECONDS  a transfer slower than 1 KiB/s for this
//                               long is dropped and retried (default 60);
//                               connecting gives up after 15 s
// Nothing here logs a header: credentials travel only in requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace t5xx::storage {

struct HttpRequest {
  std::string method = "GET";  // GET, PUT, POST, HEAD, DELETE
  std::string url;             // scheme://host[:port]/path?query, encoded
  std::vector<std::pair<std::string, std::string>> headers;
  // The body to send (PUT, POST); not owned, must outlive the call.
  const uint8_t* body = nullptr;
  size_t body_size = 0;

  HttpRequest() = default;
  HttpRequest(std::string method_, std::string url_,
              std::vector<std::pair<std::string, std::string>> headers_ = {}, std::string_view body_ = {})
      : method(std::move(method_)), url(std::move(url_)), headers(std::move(headers_)),
        body(reinterpret_cast<const uint8_t*>(body_.data())), body_size(body_.size()) {}
};

struct HttpResponse {
  long status = 0;                            // 200, 404, ...
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct RetryPolicy {
  double budget_seconds = 300;
  int max_attempts = 12;
  double timeout_seconds = 60;
  // The policy of the environment (see above), read once per process.
  static const RetryPolicy& Default();
};

// Whether a status is worth retrying (408, 429, 5xx).
bool RetryableStatus(long status);

// Sends `request` -- a fresh copy each attempt, passed first through
// `authorize` when given (so signatures and tokens stay fresh) -- retrying
// transport failures and retryable statuses under `policy`. Returns the
// first non-retryable
// response (2xx, 3xx, 4xx but 408/429), which the caller interprets.
// Throws t5xx::Error naming `what` (e.g. "GET s3://bucket/key"), the
// endpoint's host, the last failure and the attempts made when the budget
// runs out.
HttpResponse SendWithRetries(const HttpRequest& request, const std::string& what,
                             const RetryPolicy& policy = RetryPolicy::Default(),
                             const std::function<void(HttpRequest&)>& authorize = nullptr);

// The total size in a Content-Range answer ("bytes 0-99/1234" -> 1234);
// nullopt when it is missing or "*".
std::optional<uint64_t> ContentRangeTotal(const std::string& content_range);

// The environment variable's value, "" when unset.
std::string EnvVar(const char* name);

// RFC 3986 percent-encoding: unreserved characters kept, '/' kept when
// `keep_slash`.
std::string UriEncode(const std::string& s, bool keep_slash);

}  // namespace t5xx::storage
