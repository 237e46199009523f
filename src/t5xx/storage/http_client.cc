// libcurl transfers with retries (see http_client.h).
#include "t5xx/storage/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace {

double EnvNumber(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  T5XX_CHECK(end != v && *end == '\0' && d >= 0,
             std::string("environment variable ") + name + "='" + v +
                 "': expected a number >= 0");
  return d;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One easy handle per thread: curl keeps its connections alive between
// transfers, so the next request to the same store skips the handshake.
struct Handle {
  CURL* curl = nullptr;
  Handle() {
    GlobalInit();
    curl = curl_easy_init();
  }
  ~Handle() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  std::string line(data, size * n);
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  if (line.rfind("HTTP/", 0) == 0) headers->clear();  // a new response (after 100-continue)
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    size_t b = colon + 1;
    while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
    size_t e = line.size();
    while (e > b && (line[e - 1] == '\r' || line[e - 1] == '\n' || line[e - 1] == ' ')) --e;
    (*headers)[name] = line.substr(b, e - b);
  }
  return size * n;
}

struct Upload {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
};

size_t OnRead(char* buffer, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upload*>(user);
  const size_t k = std::min(size * n, u->size - u->pos);
  std::copy(u->data + u->pos, u->data + u->pos + k, buffer);
  u->pos += k;
  return k;
}

// The host of a URL, for messages (never its query or headers).
std::string HostOf(const std::string& url) {
  const size_t s = url.find("://");
  const size_t b = s == std::string::npos ? 0 : s + 3;
  return url.substr(b, url.find('/', b) - b);
}

// One attempt. Returns false (with `failure` set) on a transport failure.
bool SendOnce(const HttpRequest& r, const RetryPolicy& policy, HttpResponse* out,
              std::string* failure) {
  thread_local Handle handle;
  CURL* c = handle.curl;
  T5XX_CHECK(c != nullptr, "t5xx storage: libcurl could not start a transfer (curl_easy_init)");
  curl_easy_reset(c);
  *out = HttpResponse();
  curl_easy_setopt(c, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  char detail[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT,
                   static_cast<long>(std::min(15.0, std::max(1.0, policy.timeout_seconds))));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(std::max(1.0, policy.timeout_seconds)));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out->body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &out->headers);
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : r.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
  // No "Expect: 100-continue" round trip before a body.
  headers = curl_slist_append(headers, "Expect:");
  Upload upload{r.body, r.body_size};
  if (r.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (r.method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(c, CURLOPT_READDATA, &upload);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.body_size));
  } else if (r.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, reinterpret_cast<const char*>(r.body));
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body_size));
  } else if (r.method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  const CURLcode code = curl_easy_perform(c);
  curl_slist_free_all(headers);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  if (code != CURLE_OK) {
    *failure = curl_easy_strerror(code);
    // A name that does not resolve will not resolve on a retry (offline, or
    // a typo in an endpoint): fail at once.
    if (code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY) {
      throw Error("cannot reach " + HostOf(r.url) + ": " + *failure +
                  " (no network, or a wrong endpoint: AWS_ENDPOINT_URL, STORAGE_EMULATOR_HOST)");
    }
    // Nor will a certificate that does not verify, or TLS spoken to a
    // server that answers in plain HTTP ("wrong version number": an
    // https:// endpoint for an http:// server).
    if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE ||
        code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_ISSUER_ERROR ||
        code == CURLE_SSL_PINNEDPUBKEYNOTMATCH || code == CURLE_UNSUPPORTED_PROTOCOL ||
        (code == CURLE_SSL_CONNECT_ERROR && std::string(detail).find("wrong version number") != std::string::npos)) {
      throw Error("cannot reach " + HostOf(r.url) + " over TLS: " + *failure + " (" + detail + ")" +
                  " (check the endpoint's scheme, http:// or https://, in AWS_ENDPOINT_URL or "
                  "STORAGE_EMULATOR_HOST, and the CA certificates: SSL_CERT_FILE, CURL_CA_BUNDLE)");
    }
    return false;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
  return true;
}

}  // namespace

const RetryPolicy& RetryPolicy::Default() {
  static const RetryPolicy p = [] {
    RetryPolicy r;
    r.budget_seconds = EnvNumber("T5XX_STORAGE_RETRY_SECONDS", r.budget_seconds);
    r.max_attempts = std::max(1, static_cast<int>(EnvNumber("T5XX_STORAGE_MAX_ATTEMPTS", r.max_attempts)));
    r.timeout_seconds = EnvNumber("T5XX_STORAGE_TIMEOUT_SECONDS", r.timeout_seconds);
    return r;
  }();
  return p;
}

bool RetryableStatus(long status) {
  return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

HttpResponse SendWithRetries(const HttpRequest& request, const std::string& what,
                             const RetryPolicy& policy,
                             const std::function<void(HttpRequest&)>& authorize) {
  const auto start = std::chrono::steady_clock::now();
  thread_local std::mt19937_64 rng(std::random_device{}());
  double backoff = 0.1;
  std::string last;
  std::string host;
  int attempt = 0;
  for (;;) {
    ++attempt;
    HttpRequest r = request;
    if (authorize) authorize(r);
    host = HostOf(r.url);
    HttpResponse resp;
    std::string failure;
    bool sent = false;
    try {
      sent = SendOnce(r, policy, &resp, &failure);
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
    if (sent) {
      if (!RetryableStatus(resp.status)) return resp;
      last = "HTTP " + std::to_string(resp.status);
    } else {
      last = failure;
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double wait = std::uniform_real_distribution<double>(0.5, 1.0)(rng) * backoff;
    if (attempt >= policy.max_attempts || elapsed + wait > policy.budget_seconds) {
      throw Error(what + " failed at " + host + " after " + std::to_string(attempt) + " attempt" +
                  (attempt == 1 ? "" : "s") + " in " + std::to_string(static_cast<int>(elapsed)) +
                  " s: " + last +
                  " (the store is down or unreachable; T5XX_STORAGE_RETRY_SECONDS and "
                  "T5XX_STORAGE_MAX_ATTEMPTS set how long t5xx retries)");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    backoff = std::min(backoff * 2, 10.0);
  }
}

std::optional<uint64_t> ContentRangeTotal(const std::string& content_range) {
  const size_t slash = content_range.rfind('/');
  if (slash == std::string::npos || content_range.substr(slash + 1) == "*") return std::nullopt;
  return std::stoull(content_range.substr(slash + 1));
}

std::string EnvVar(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string UriEncode(const std::string& s, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace t5xx::storage
