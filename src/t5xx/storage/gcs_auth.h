// Credentials for gs://, found as Google's client libraries find them
// (Application Default Credentials):
//   1. STORAGE_EMULATOR_HOST set: a local emulator, no credentials;
//   2. GOOGLE_APPLICATION_CREDENTIALS: a service account key (a JWT signed
//      with its private key, RS256, exchanged at its token_uri for an
//      OAuth2 access token) or an authorized_user file (a refresh token);
//   3. gcloud's ~/.config/gcloud/application_default_credentials.json
//      (CLOUDSDK_CONFIG moves it);
//   4. the GCE metadata server (GCE_METADATA_HOST, else
//      metadata.google.internal), when it answers within 1 s;
//   5. none: anonymous requests (public buckets such as gs://t5-data).
// Tokens are cached until a minute before they expire. Framework-free.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace t5xx::storage {

class GcsAuth {
 public:
  // Decides the source once (1-5 above). Throws t5xx::Error naming the
  // credentials file when it cannot be read or has an unknown "type".
  GcsAuth();
  // "Bearer <token>", or "" for anonymous / emulator requests. Throws
  // t5xx::Error naming the source and the token endpoint when no token can
  // be had (the response's error text, never the key).
  std::string AuthorizationHeader();
  // Where the credentials come from, for messages ("service account
  // x@y.iam.gserviceaccount.com from /path/key.json", "anonymous").
  const std::string& source() const { return source_; }

 private:
  enum class Kind { kNone, kServiceAccount, kAuthorizedUser, kMetadata };
  void Refresh();
  Kind kind_ = Kind::kNone;
  std::string source_ = "anonymous";
  std::string client_email_, private_key_, token_uri_;
  std::string client_id_, client_secret_, refresh_token_;
  std::string metadata_host_;
  std::mutex mu_;
  std::string token_;
  std::chrono::steady_clock::time_point expiry_;
};

}  // namespace t5xx::storage
