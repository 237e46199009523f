// The gs:// driver (see gcs_store.h).
#include "t5xx/storage/gcs_store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>

#include "t5xx/util/error.h"

namespace t5xx::storage {
std::string GcsStore::EndpointFromEnvironment() {
  const char* emulator = std::getenv("STORAGE_EMULATOR_HOST");
  if (emulator == nullptr || *emulator == '\0') return "https://storage.googleapis.com";
  std::string e = emulator;
  if (e.find("://") == std::string::npos) e = "http://" + e;
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

GcsStore::GcsStore(std::string bucket, std::string endpoint, std::shared_ptr<GcsAuth> auth)
    : bucket_(std::move(bucket)), endpoint_(std::move(endpoint)), auth_(std::move(auth)) {}

std::string GcsStore::ObjectUrl(const std::string& object) const {
  return endpoint_ + "/storage/v1/b/" + UriEncode(bucket_, false) + "/o/" + UriEncode(object, false);
}

HttpResponse GcsStore::Send(const std::string& method, const std::string& url, std::string_view body,
                            std::vector<std::pair<std::string, std::string>> headers,
                            const std::string& what) {
  return SendWithRetries(HttpRequest(method, url, std::move(headers), body), what,
                         RetryPolicy::Default(), [&](HttpRequest& r) {
                           const std::string auth = auth_->AuthorizationHeader();
                           if (!auth.empty()) r.headers.emplace_back("Authorization", auth);
                         });
}

std::string GcsStore::UrlFor(const std::string& object) const { return "gs://" + bucket_ + "/" + object; }

void GcsStore::Fail(const HttpResponse& r, const std::string& what, const std::string& object) const {
  std::string message;
  try {
    const nlohmann::json j = nlohmann::json::parse(r.body);
    if (j.contains("error") && j["error"].is_object()) message = j["error"].value("message", "");
  } catch (const nlohmann::json::exception&) {
  }
  const std::string url = "gs://" + bucket_ + (object.empty() ? "" : "/" + object);
  std::string hint;
  if (r.status == 401) {
    hint = "the credentials (" + auth_->source() + ") were refused" +
           (message.empty() ? "" : ": " + message) + "; check GOOGLE_APPLICATION_CREDENTIALS";
  } else if (r.status == 403) {
    hint = "access denied to " + auth_->source() + (message.empty() ? "" : " (" + message + ")") +
           "; grant it access to the bucket";
  } else {
    hint = "HTTP " + std::to_string(r.status) + (message.empty() ? "" : ": " + message);
  }
  throw Error(what + " " + url + ": " + hint);
}

void GcsStore::CheckBucket(const std::string& what, const std::string& object) {
  if (bucket_seen_) return;
  const HttpResponse r = Send("GET", endpoint_ + "/storage/v1/b/" + UriEncode(bucket_, false), {}, {},
                              "GET gs://" + bucket_);
  if (r.status == 404) {
    throw Error(what + " gs://" + bucket_ + (object.empty() ? "" : "/" + object) + ": bucket '" +
                bucket_ + "' does not exist; create it or correct the URL");
  }
  // (403 on the bucket while objects are readable is normal for public data.)
  bucket_seen_ = true;
}

std::optional<HttpResponse> GcsStore::GetBytes(const std::string& object, uint64_t first,
                                                         uint64_t last) {
  HttpResponse r = Send("GET", ObjectUrl(object) + "?alt=media", {},
                        {{"Range", RangeHeader(first, last)}}, "GET " + UrlFor(object));
  if (r.status == 404) {
    CheckBucket("cannot read", object);
    return std::nullopt;
  }
  return r;
}


void GcsStore::Put(const std::string& object, std::string_view data) {
  T5XX_CHECK(!object.empty(), "cannot write gs://" + bucket_ + ": the URL names no object");
  const std::string base = endpoint_ + "/upload/storage/v1/b/" + UriEncode(bucket_, false) + "/o";
  HttpResponse r;
  if (data.empty()) {
    // An empty object as a multipart upload (metadata + no bytes): the same
    // object, and the form emulators accept without a body.
    const std::string boundary = "t5xx_empty_object_boundary";
    const std::string body = "--" + boundary + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" +
                             nlohmann::json{{"name", object}}.dump() + "\r\n--" + boundary +
                             "\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--" + boundary + "--\r\n";
    r = Send("POST", base + "?uploadType=multipart", body,
             {{"Content-Type", "multipart/related; boundary=" + boundary}}, "PUT gs://" + bucket_ + "/" + object);
  } else {
    r = Send("POST", base + "?uploadType=media&name=" + UriEncode(object, false), data,
             {{"Content-Type", "application/octet-stream"}}, "PUT gs://" + bucket_ + "/" + object);
  }
  if (r.status == 404) {
    CheckBucket("cannot write", object);
  }
  if (r.status != 200) Fail(r, "cannot write", object);
}

std::optional<uint64_t> GcsStore::Size(const std::string& object) {
  const HttpResponse r = Send("GET", ObjectUrl(object), {}, {}, "STAT gs://" + bucket_ + "/" + object);
  if (r.status == 404) {
    CheckBucket("cannot read", object);
    return std::nullopt;
  }
  if (r.status != 200) Fail(r, "cannot read", object);
  try {
    const nlohmann::json j = nlohmann::json::parse(r.body);
    const nlohmann::json& size = j.at("size");
    return size.is_string() ? std::stoull(size.get<std::string>()) : size.get<uint64_t>();
  } catch (const std::exception&) {
    throw Error("cannot read gs://" + bucket_ + "/" + object +
                ": the store's metadata answer has no size");
  }
}

Listing GcsStore::List(const std::string& prefix, bool one_level) {
  Listing out;
  std::string token;
  for (;;) {
    std::string url = endpoint_ + "/storage/v1/b/" + UriEncode(bucket_, false) +
                      "/o?prefix=" + UriEncode(prefix, false) + "&fields=items(name,size,generation),prefixes,nextPageToken";
    if (one_level) url += "&delimiter=%2F";
    if (!token.empty()) url += "&pageToken=" + UriEncode(token, false);
    const HttpResponse r = Send("GET", url, {}, {}, "LIST gs://" + bucket_ + "/" + prefix);
    if (r.status == 404) CheckBucket("cannot list", prefix);
    if (r.status != 200) Fail(r, "cannot list", prefix);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(r.body);
    } catch (const nlohmann::json::exception&) {
      throw Error("cannot list gs://" + bucket_ + "/" + prefix + ": the store's answer is not JSON");
    }
    for (const auto& item : j.value("items", nlohmann::json::array())) {
      const nlohmann::json& size = item.value("size", nlohmann::json("0"));
      const nlohmann::json& generation = item.value("generation", nlohmann::json(""));
      out.objects.push_back({item.value("name", ""),
                             size.is_string() ? std::stoull(size.get<std::string>()) : size.get<uint64_t>(),
                             generation.is_string() ? generation.get<std::string>() : generation.dump()});
    }
    for (const auto& p : j.value("prefixes", nlohmann::json::array())) out.prefixes.push_back(p.get<std::string>());
    token = j.value("nextPageToken", "");
    if (token.empty()) break;
  }
  return out;
}

void GcsStore::Delete(const std::string& object) {
  const HttpResponse r = Send("DELETE", ObjectUrl(object), {}, {}, "DELETE gs://" + bucket_ + "/" + object);
  if (r.status == 404) {
    CheckBucket("cannot delete", object);
    return;
  }
  if (r.status != 204 && r.status != 200) Fail(r, "cannot delete", object);
}

}  // namespace t5xx::storage
