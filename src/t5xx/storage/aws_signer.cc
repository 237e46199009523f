// AWS settings and Signature Version 4 (see aws_signer.h).
#include "t5xx/storage/aws_signer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <vector>

#include "t5xx/storage/crypto.h"
#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// An INI file's sections (boto3's shared files): section -> key -> value.
// Missing file: empty. Lines "key = value" before any section, or without
// '=', are errors naming the file and line.
std::map<std::string, std::map<std::string, std::string>> ReadIni(const std::string& path) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::ifstream in(path);
  if (!in) return out;
  std::string line, section;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = Trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[') {
      T5XX_CHECK(t.back() == ']', path + ":" + std::to_string(n) + ": expected [section]");
      section = Trim(t.substr(1, t.size() - 2));
      out[section];
      continue;
    }
    const size_t eq = t.find('=');
    // (Indented lines continue a nested setting such as "s3 =\n  addressing_style = path".)
    if (eq == std::string::npos && std::isspace(static_cast<unsigned char>(line[0]))) continue;
    T5XX_CHECK(eq != std::string::npos && !section.empty(),
               path + ":" + std::to_string(n) + ": expected 'key = value' inside a [section]");
    // (Keys are case-insensitive, as Python's configparser reads them for boto3.)
    std::string key = Trim(t.substr(0, eq));
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    out[section][key] = Trim(t.substr(eq + 1));
  }
  return out;
}

std::string HomeFile(const char* env, const char* relative) {
  const std::string v = EnvVar(env);
  if (!v.empty()) return v;
  return EnvVar("HOME") + "/" + relative;
}

struct ParsedUrl {
  std::string host, path, query;
};

ParsedUrl Split(const std::string& url) {
  ParsedUrl p;
  const size_t s = url.find("://");
  const size_t b = s == std::string::npos ? 0 : s + 3;
  const size_t slash = url.find('/', b);
  p.host = url.substr(b, slash == std::string::npos ? std::string::npos : slash - b);
  std::string rest = slash == std::string::npos ? "/" : url.substr(slash);
  const size_t q = rest.find('?');
  p.path = rest.substr(0, q);
  if (q != std::string::npos) p.query = rest.substr(q + 1);
  return p;
}

std::string CanonicalQuery(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t b = 0;
  while (b <= query.size() && !query.empty()) {
    size_t e = query.find('&', b);
    if (e == std::string::npos) e = query.size();
    const std::string item = query.substr(b, e - b);
    if (!item.empty()) {
      const size_t eq = item.find('=');
      params.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
    }
    b = e + 1;
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [k, v] : params) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

}  // namespace

AwsSettings ReadAwsSettings() {
  AwsSettings s;
  const std::string profile = EnvVar("AWS_PROFILE").empty() ? "default" : EnvVar("AWS_PROFILE");
  const std::string credentials_file = HomeFile("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  const std::string config_file = HomeFile("AWS_CONFIG_FILE", ".aws/config");
  const auto creds = ReadIni(credentials_file);
  const auto config = ReadIni(config_file);
  const auto config_section = [&]() -> const std::map<std::string, std::string>* {
    for (const std::string& name : {profile == "default" ? profile : "profile " + profile, profile}) {
      auto it = config.find(name);
      if (it != config.end()) return &it->second;
    }
    return nullptr;
  }();
  if (!EnvVar("AWS_ACCESS_KEY_ID").empty()) {
    T5XX_CHECK(!EnvVar("AWS_SECRET_ACCESS_KEY").empty(),
               "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not: set both (or neither, "
               "to use " + credentials_file + ")");
    s.credentials = {EnvVar("AWS_ACCESS_KEY_ID"), EnvVar("AWS_SECRET_ACCESS_KEY"), EnvVar("AWS_SESSION_TOKEN"),
                     "the environment (AWS_ACCESS_KEY_ID)"};
  } else {
    const std::map<std::string, std::string>* section = nullptr;
    if (auto it = creds.find(profile); it != creds.end()) section = &it->second;
    if (section == nullptr || !section->count("aws_access_key_id")) section = config_section;
    if (section != nullptr && section->count("aws_access_key_id")) {
      T5XX_CHECK(section->count("aws_secret_access_key"),
                 credentials_file + ": profile [" + profile +
                     "] has aws_access_key_id but no aws_secret_access_key");
      s.credentials.access_key_id = section->at("aws_access_key_id");
      s.credentials.secret_access_key = section->at("aws_secret_access_key");
      if (section->count("aws_session_token")) s.credentials.session_token = section->at("aws_session_token");
      s.credentials.source = credentials_file + " [" + profile + "]";
    } else {
      T5XX_CHECK(EnvVar("AWS_PROFILE").empty() || creds.count(profile) || config_section != nullptr,
                 "AWS_PROFILE=" + profile + " names a profile that neither " + credentials_file +
                     " nor " + config_file + " has");
    }
  }
  s.region = !EnvVar("AWS_REGION").empty()           ? EnvVar("AWS_REGION")
             : !EnvVar("AWS_DEFAULT_REGION").empty() ? EnvVar("AWS_DEFAULT_REGION")
             : config_section && config_section->count("region") ? config_section->at("region")
                                                                 : "us-east-1";
  s.endpoint = !EnvVar("AWS_ENDPOINT_URL_S3").empty() ? EnvVar("AWS_ENDPOINT_URL_S3")
               : !EnvVar("AWS_ENDPOINT_URL").empty()  ? EnvVar("AWS_ENDPOINT_URL")
               : config_section && config_section->count("endpoint_url")
                   ? config_section->at("endpoint_url")
                   : "";
  while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
  return s;
}

std::string AmzDateNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

void SignV4(HttpRequest& r, const AwsCredentials& credentials, const std::string& region,
            const std::string& service, const std::string& amz_date,
            const std::string& payload_hash) {
  if (credentials.anonymous()) return;
  const ParsedUrl u = Split(r.url);
  r.headers.emplace_back("host", u.host);
  r.headers.emplace_back("x-amz-date", amz_date);
  r.headers.emplace_back("x-amz-content-sha256", payload_hash);
  if (!credentials.session_token.empty()) {
    r.headers.emplace_back("x-amz-security-token", credentials.session_token);
  }
  std::vector<std::pair<std::string, std::string>> canonical;
  for (const auto& [k, v] : r.headers) {
    std::string name = k;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    canonical.emplace_back(name, Trim(v));
  }
  std::sort(canonical.begin(), canonical.end());
  std::string headers, signed_headers;
  for (const auto& [k, v] : canonical) {
    headers += k + ":" + v + "\n";
    signed_headers += (signed_headers.empty() ? "" : ";") + k;
  }
  const std::string request = r.method + "\n" + u.path + "\n" + CanonicalQuery(u.query) + "\n" +
                              headers + "\n" + signed_headers + "\n" + payload_hash;
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  const std::string to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Hex(Sha256(request));
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  key = HmacSha256(key, "aws4_request");
  r.headers.emplace_back("Authorization", "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id +
                                              "/" + scope + ", SignedHeaders=" + signed_headers +
                                              ", Signature=" + Hex(HmacSha256(key, to_sign)));
}

}  // namespace t5xx::storage
