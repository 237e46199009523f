// SHA-256, HMAC, RS256 and base64url over libcrypto (see crypto.h).
#include "t5xx/storage/crypto.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include <memory>

#include "t5xx/util/error.h"

namespace t5xx::storage {

std::string Sha256(std::string_view data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return std::string(reinterpret_cast<char*>(md), sizeof(md));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &n);
  return std::string(reinterpret_cast<char*>(md), n);
}

std::string Hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string Base64Url(std::string_view bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += table[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = b[i] << 16;
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
  } else if (i + 2 == bytes.size()) {
    const unsigned v = (b[i] << 16) | (b[i + 1] << 8);
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
  }
  return out;
}

std::string SignRs256(std::string_view data, const std::string& pem_key,
                      const std::string& key_source) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem_key.data(), static_cast<int>(pem_key.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr, EVP_PKEY_free);
  T5XX_CHECK(key != nullptr, key_source +
                                 ": its \"private_key\" is not a PEM private key; download the "
                                 "service account's key file again");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  size_t n = 0;
  T5XX_CHECK(ctx && EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
                 EVP_DigestSign(ctx.get(), nullptr, &n,
                                reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1,
             key_source + ": its private key cannot sign (RS256)");
  std::string sig(n, '\0');
  T5XX_CHECK(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &n,
                            reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1,
             key_source + ": its private key cannot sign (RS256)");
  sig.resize(n);
  return sig;
}

}  // namespace t5xx::storage
