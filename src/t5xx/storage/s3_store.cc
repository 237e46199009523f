// The s3:// driver (see s3_store.h).
#include "t5xx/storage/s3_store.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>

#include "t5xx/storage/crypto.h"
#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace {

std::string DecodeEntities(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const size_t semi = s.find(';', i);
    const std::string e = semi == std::string::npos ? "" : s.substr(i + 1, semi - i - 1);
    if (e == "amp") out += '&';
    else if (e == "lt") out += '<';
    else if (e == "gt") out += '>';
    else if (e == "quot") out += '"';
    else if (e == "apos") out += '\'';
    else if (!e.empty() && e[0] == '#') {
      const long c = e.size() > 1 && (e[1] == 'x' || e[1] == 'X') ? std::strtol(e.c_str() + 2, nullptr, 16)
                                                                   : std::strtol(e.c_str() + 1, nullptr, 10);
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
      } else {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
      }
    } else {
      out += s.substr(i, semi == std::string::npos ? std::string::npos : semi - i + 1);
    }
    i = semi == std::string::npos ? s.size() : semi;
  }
  return out;
}

}  // namespace

std::vector<std::string> XmlValues(const std::string& xml, const std::string& tag) {
  std::vector<std::string> out;
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  size_t pos = 0;
  while ((pos = xml.find(open, pos)) != std::string::npos) {
    const size_t b = pos + open.size();
    const size_t e = xml.find(close, b);
    if (e == std::string::npos) break;
    out.push_back(DecodeEntities(xml.substr(b, e - b)));
    pos = e + close.size();
  }
  return out;
}

S3Store::S3Store(std::string bucket, AwsSettings settings)
    : bucket_(std::move(bucket)), settings_(std::move(settings)) {}

std::string S3Store::UrlOf(const std::string& object, const std::string& query) const {
  std::string url = settings_.endpoint.empty()
                        ? "https://" + bucket_ + ".s3." + settings_.region + ".amazonaws.com/" +
                              UriEncode(object, true)
                        : settings_.endpoint + "/" + bucket_ + "/" + UriEncode(object, true);
  if (!query.empty()) url += "?" + query;
  return url;
}

HttpResponse S3Store::Send(const std::string& method, const std::string& object,
                           const std::string& query, std::string_view body,
                           std::vector<std::pair<std::string, std::string>> headers,
                           const std::string& what) {
  return SendWithRetries(
      HttpRequest(method, UrlOf(object, query), std::move(headers), body), what, RetryPolicy::Default(),
      [&](HttpRequest& r) {
        SignV4(r, settings_.credentials, settings_.region, "s3", AmzDateNow(), "UNSIGNED-PAYLOAD");
      });
}

std::string S3Store::UrlFor(const std::string& object) const { return "s3://" + bucket_ + "/" + object; }

void S3Store::Fail(const HttpResponse& r, const std::string& what, const std::string& object) const {
  const std::vector<std::string> codes = XmlValues(r.body, "Code");
  const std::string code = codes.empty() ? "" : codes.front();
  const std::string url = "s3://" + bucket_ + (object.empty() ? "" : "/" + object);
  std::string hint;
  if (code == "NoSuchBucket") {
    hint = "bucket '" + bucket_ + "' does not exist" +
           (settings_.endpoint.empty() ? "" : " at " + settings_.endpoint) +
           "; create it or correct the URL";
  } else if (code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" ||
             code == "ExpiredToken" || code == "InvalidToken") {
    hint = "the credentials from " +
           (settings_.credentials.source.empty() ? std::string("nowhere (anonymous)")
                                                 : settings_.credentials.source) +
           " were refused (" + code + "); check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the profile";
  } else if (r.status == 403) {
    hint = std::string("access denied") +
           (settings_.credentials.anonymous()
                ? " to anonymous requests: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile"
                : " to the credentials from " + settings_.credentials.source +
                      ": grant them access to the bucket");
  } else {
    hint = "HTTP " + std::to_string(r.status) + (code.empty() ? "" : " " + code);
  }
  throw Error(what + " " + url + ": " + hint);
}

std::optional<HttpResponse> S3Store::GetBytes(const std::string& object, uint64_t first,
                                                        uint64_t last) {
  HttpResponse r = Send("GET", object, "", {}, {{"Range", RangeHeader(first, last)}}, "GET " + UrlFor(object));
  if (r.status == 404 && XmlValues(r.body, "Code") == std::vector<std::string>{"NoSuchKey"}) {
    return std::nullopt;
  }
  return r;
}


void S3Store::Put(const std::string& object, std::string_view data) {
  T5XX_CHECK(!object.empty(), "cannot write s3://" + bucket_ + ": the URL names no object");
  if (data.size() > kPartBytes) return PutMultipart(object, data);
  const HttpResponse r = Send("PUT", object, "", data, {{"Content-Type", "application/octet-stream"}},
                              "PUT s3://" + bucket_ + "/" + object);
  if (r.status != 200) Fail(r, "cannot write", object);
}

void S3Store::PutMultipart(const std::string& object, std::string_view data) {
  const std::string what = "PUT s3://" + bucket_ + "/" + object;
  HttpResponse r = Send("POST", object, "uploads=", {}, {}, what + " (CreateMultipartUpload)");
  if (r.status != 200) Fail(r, "cannot write", object);
  const std::vector<std::string> ids = XmlValues(r.body, "UploadId");
  T5XX_CHECK(ids.size() == 1, "cannot write s3://" + bucket_ + "/" + object +
                                  ": the store's CreateMultipartUpload answer has no UploadId");
  const std::string id = UriEncode(ids[0], false);
  const uint64_t parts = (data.size() + kPartBytes - 1) / kPartBytes;
  std::vector<std::string> etags(parts);
  std::atomic<uint64_t> next{0};
  auto worker = [&] {
    for (uint64_t i; (i = next++) < parts;) {
      const uint64_t b = i * kPartBytes;
      const std::string_view part = data.substr(b, std::min<uint64_t>(kPartBytes, data.size() - b));
      const HttpResponse pr =
          Send("PUT", object, "partNumber=" + std::to_string(i + 1) + "&uploadId=" + id, part, {},
               what + " (part " + std::to_string(i + 1) + ")");
      if (pr.status != 200) Fail(pr, "cannot write", object);
      etags[i] = pr.header("etag");
    }
  };
  try {
    std::vector<std::future<void>> jobs;
    for (int t = 0; t < std::min<int>(kParallelParts, static_cast<int>(parts)); ++t) {
      jobs.push_back(std::async(std::launch::async, worker));
    }
    for (auto& j : jobs) j.get();
    std::string body = "<CompleteMultipartUpload>";
    for (uint64_t i = 0; i < parts; ++i) {
      body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags[i] +
              "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    r = Send("POST", object, "uploadId=" + id, body, {{"Content-Type", "application/xml"}},
             what + " (CompleteMultipartUpload)");
    // A retried CompleteMultipartUpload whose first answer was lost finds
    // the upload gone: done when the object is there whole.
    if (r.status == 404 && XmlValues(r.body, "Code") == std::vector<std::string>{"NoSuchUpload"} &&
        Size(object) == data.size()) {
      return;
    }
    // S3 may answer 200 with an <Error> body.
    if (r.status != 200 || r.body.find("<Error>") != std::string::npos) Fail(r, "cannot write", object);
  } catch (...) {
    try {
      Send("DELETE", object, "uploadId=" + id, {}, {}, what + " (AbortMultipartUpload)");
    } catch (...) {
    }
    throw;
  }
}

std::optional<uint64_t> S3Store::Size(const std::string& object) {
  const HttpResponse r = Send("HEAD", object, "", {}, {}, "HEAD s3://" + bucket_ + "/" + object);
  if (r.status == 404) {
    // HEAD has no body to tell a missing key from a missing bucket: ask.
    const HttpResponse b = Send("HEAD", "", "", {}, {}, "HEAD s3://" + bucket_);
    if (b.status == 404) Fail(HttpResponse{404, {}, "<Code>NoSuchBucket</Code>"}, "cannot read", object);
    return std::nullopt;
  }
  if (r.status == 403) {
    // HEAD's 403 has no body to tell refused credentials from a missing
    // grant: a one-byte GET carries S3's <Code>.
    const HttpResponse g = Send("GET", object, "", {}, {{"Range", "bytes=0-0"}}, "GET s3://" + bucket_ + "/" + object);
    Fail(g.status == 403 ? g : r, "cannot read", object);
  }
  if (r.status != 200) Fail(r, "cannot read", object);
  return std::stoull(r.header("content-length").empty() ? "0" : r.header("content-length"));
}

Listing S3Store::List(const std::string& prefix, bool one_level) {
  Listing out;
  std::string token;
  for (;;) {
    std::string query = "list-type=2&prefix=" + UriEncode(prefix, false);
    if (one_level) query += "&delimiter=%2F";
    if (!token.empty()) query += "&continuation-token=" + UriEncode(token, false);
    const HttpResponse r = Send("GET", "", query, {}, {}, "LIST s3://" + bucket_ + "/" + prefix);
    if (r.status != 200) Fail(r, "cannot list", prefix);
    for (const std::string& c : XmlValues(r.body, "Contents")) {
      const std::vector<std::string> key = XmlValues(c, "Key"), size = XmlValues(c, "Size");
      const std::vector<std::string> etag = XmlValues(c, "ETag");
      if (!key.empty()) {
        out.objects.push_back({key[0], size.empty() ? 0 : std::stoull(size[0]), etag.empty() ? "" : etag[0]});
      }
    }
    for (const std::string& c : XmlValues(r.body, "CommonPrefixes")) {
      for (const std::string& p : XmlValues(c, "Prefix")) out.prefixes.push_back(p);
    }
    const std::vector<std::string> truncated = XmlValues(r.body, "IsTruncated");
    const std::vector<std::string> next = XmlValues(r.body, "NextContinuationToken");
    if (truncated.empty() || truncated[0] != "true" || next.empty()) break;
    token = next[0];
  }
  return out;
}

void S3Store::Delete(const std::string& object) {
  const HttpResponse r = Send("DELETE", object, "", {}, {}, "DELETE s3://" + bucket_ + "/" + object);
  if (r.status != 204 && r.status != 200 && r.status != 404) Fail(r, "cannot delete", object);
  if (r.status == 404 && XmlValues(r.body, "Code") != std::vector<std::string>{"NoSuchKey"}) {
    Fail(r, "cannot delete", object);
  }
}

}  // namespace t5xx::storage
