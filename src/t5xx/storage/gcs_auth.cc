// Application Default Credentials for gs:// (see gcs_auth.h).
#include "t5xx/storage/gcs_auth.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "t5xx/storage/crypto.h"
#include "t5xx/storage/http_client.h"
#include "t5xx/util/error.h"

namespace t5xx::storage {
namespace {

nlohmann::json ReadJsonFile(const std::string& path, const std::string& why) {
  std::ifstream in(path);
  T5XX_CHECK(static_cast<bool>(in), why + " " + path + " cannot be read; correct the path");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::exception& e) {
    throw Error(why + " " + path + " is not JSON (" + e.what() + ")");
  }
}

std::string Field(const nlohmann::json& j, const char* key, const std::string& path) {
  T5XX_CHECK(j.contains(key) && j[key].is_string(),
             path + ": the credentials have no \"" + key + "\"; download them again");
  return j[key].get<std::string>();
}

}  // namespace

GcsAuth::GcsAuth() {
  if (!EnvVar("STORAGE_EMULATOR_HOST").empty()) {
    source_ = "none (the emulator at STORAGE_EMULATOR_HOST=" + EnvVar("STORAGE_EMULATOR_HOST") + ")";
    return;
  }
  std::string path = EnvVar("GOOGLE_APPLICATION_CREDENTIALS");
  std::string why = "GOOGLE_APPLICATION_CREDENTIALS=";
  if (path.empty()) {
    const std::string dir = !EnvVar("CLOUDSDK_CONFIG").empty() ? EnvVar("CLOUDSDK_CONFIG")
                                                            : EnvVar("HOME") + "/.config/gcloud";
    const std::string adc = dir + "/application_default_credentials.json";
    if (std::ifstream(adc)) {
      path = adc;
      why = "gcloud's application default credentials";
    }
  }
  if (!path.empty()) {
    const nlohmann::json j = ReadJsonFile(path, why);
    const std::string type = j.value("type", "");
    if (type == "service_account") {
      kind_ = Kind::kServiceAccount;
      client_email_ = Field(j, "client_email", path);
      private_key_ = Field(j, "private_key", path);
      token_uri_ = j.value("token_uri", "https://oauth2.googleapis.com/token");
      source_ = "service account " + client_email_ + " from " + path;
    } else if (type == "authorized_user") {
      kind_ = Kind::kAuthorizedUser;
      client_id_ = Field(j, "client_id", path);
      client_secret_ = Field(j, "client_secret", path);
      refresh_token_ = Field(j, "refresh_token", path);
      token_uri_ = j.value("token_uri", "https://oauth2.googleapis.com/token");
      source_ = "user credentials from " + path;
    } else {
      throw Error(path + ": credentials of type \"" + type +
                  "\" are not supported: use a service account key (\"service_account\") or "
                  "`gcloud auth application-default login` (\"authorized_user\")");
    }
    return;
  }
  metadata_host_ = !EnvVar("GCE_METADATA_HOST").empty() ? EnvVar("GCE_METADATA_HOST") : "metadata.google.internal";
  RetryPolicy quick;
  quick.max_attempts = 1;
  quick.timeout_seconds = 1;
  quick.budget_seconds = 1;
  try {
    const HttpResponse r = SendWithRetries(
        HttpRequest("GET", "http://" + metadata_host_ +
                               "/computeMetadata/v1/instance/service-accounts/default/email",
                    {{"Metadata-Flavor", "Google"}}),
        "metadata probe", quick);
    if (r.status == 200 && r.header("metadata-flavor") == "Google") {
      kind_ = Kind::kMetadata;
      source_ = "the metadata server's service account " + r.body + " (" + metadata_host_ + ")";
    }
  } catch (const Error&) {
    // No metadata server: anonymous.
  }
}

void GcsAuth::Refresh() {
  std::string body;
  HttpRequest q;
  if (kind_ == Kind::kMetadata) {
    q.url = "http://" + metadata_host_ + "/computeMetadata/v1/instance/service-accounts/default/token";
    q.headers = {{"Metadata-Flavor", "Google"}};
  } else {
    q.method = "POST";
    q.url = token_uri_;
    q.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
    if (kind_ == Kind::kServiceAccount) {
      const long now = static_cast<long>(std::time(nullptr));
      const nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
      const nlohmann::json claims = {
          {"iss", client_email_},
          {"scope", "https://www.googleapis.com/auth/devstorage.read_write"},
          {"aud", token_uri_},
          {"iat", now},
          {"exp", now + 3600}};
      const std::string unsigned_jwt = Base64Url(header.dump()) + "." + Base64Url(claims.dump());
      const std::string jwt = unsigned_jwt + "." + Base64Url(SignRs256(unsigned_jwt, private_key_, source_));
      body = "grant_type=" + UriEncode("urn:ietf:params:oauth:grant-type:jwt-bearer", false) +
             "&assertion=" + jwt;
    } else {
      body = "grant_type=refresh_token&client_id=" + UriEncode(client_id_, false) +
             "&client_secret=" + UriEncode(client_secret_, false) +
             "&refresh_token=" + UriEncode(refresh_token_, false);
    }
  }
  q.body = reinterpret_cast<const uint8_t*>(body.data());
  q.body_size = body.size();
  const HttpResponse r = SendWithRetries(q, "token request to " + q.url);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.body);
  } catch (const nlohmann::json::exception&) {
  }
  if (r.status != 200 || !j.contains("access_token")) {
    const std::string detail = j.is_object() && j.contains("error_description")
                                   ? j["error_description"].dump()
                               : j.is_object() && j.contains("error") ? j["error"].dump()
                                                                       : "HTTP " + std::to_string(r.status);
    throw Error("gs://: no access token for " + source_ + " from " + q.url + ": " + detail +
                " (check the credentials file, or unset GOOGLE_APPLICATION_CREDENTIALS for "
                "anonymous reads of public buckets)");
  }
  token_ = j["access_token"].get<std::string>();
  const long expires = j.value("expires_in", 3600L);
  expiry_ = std::chrono::steady_clock::now() + std::chrono::seconds(std::max(0L, expires - 60));
}

std::string GcsAuth::AuthorizationHeader() {
  if (kind_ == Kind::kNone) return "";
  std::lock_guard<std::mutex> lock(mu_);
  if (token_.empty() || std::chrono::steady_clock::now() >= expiry_) Refresh();
  return "Bearer " + token_;
}

}  // namespace t5xx::storage
