// The cryptography the object-store protocols need, over OpenSSL's libcrypto
// (Debian's libssl-dev): SHA-256 and HMAC-SHA256 (AWS Signature Version 4),
// RS256 signatures (a Google service account's OAuth2 JWT) and base64url.
// Framework-free.
#pragma once

#include <string>
#include <string_view>

namespace t5xx::storage {

std::string Sha256(std::string_view data);                        // 32 raw bytes
std::string HmacSha256(std::string_view key, std::string_view data);  // 32 raw bytes
std::string Hex(std::string_view bytes);                          // lower-case
// RFC 4648 section 5, without '=' padding (JWT's encoding).
std::string Base64Url(std::string_view bytes);
// RSASSA-PKCS1-v1_5 with SHA-256 of `data` under the PEM private key
// `pem_key` (a service account's "private_key"). Throws t5xx::Error naming
// `key_source` (the credentials file) when the key cannot be read.
std::string SignRs256(std::string_view data, const std::string& pem_key,
                      const std::string& key_source);

}  // namespace t5xx::storage
