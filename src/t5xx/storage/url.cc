// URL parsing for the storage layer (see url.h).
#include "t5xx/storage/url.h"

#include "t5xx/util/error.h"

namespace t5xx::storage {

const char* Url::scheme_name() const {
  switch (scheme) {
    case Scheme::kGcs: return "gs";
    case Scheme::kS3: return "s3";
    default: return "file";
  }
}

std::string Url::ToString() const {
  if (!remote()) return path;
  return std::string(scheme_name()) + "://" + bucket + (object.empty() ? "" : "/" + object);
}

Url ParseUrl(const std::string& text) {
  Url u;
  u.text = text;
  const size_t sep = text.find("://");
  if (sep == std::string::npos) {
    u.path = text;
    return u;
  }
  const std::string scheme = text.substr(0, sep);
  const std::string rest = text.substr(sep + 3);
  if (scheme == "file") {
    u.path = rest;
    T5XX_CHECK(!u.path.empty(), "'" + text + "': a file:// URL needs a path (file:///abs/path)");
    return u;
  }
  if (scheme == "gs" || scheme == "s3") {
    u.scheme = scheme == "gs" ? Url::Scheme::kGcs : Url::Scheme::kS3;
    const size_t slash = rest.find('/');
    u.bucket = rest.substr(0, slash);
    T5XX_CHECK(!u.bucket.empty(), "'" + text + "' names no bucket: write " + scheme +
                                      "://BUCKET/PATH");
    if (slash != std::string::npos) {
      u.object = rest.substr(slash + 1);
      while (!u.object.empty() && u.object.back() == '/') u.object.pop_back();
    }
    T5XX_CHECK(u.object.find("//") == std::string::npos,
               "'" + text + "' has an empty path segment ('//'): object stores would keep it as a "
               "different name; remove the doubled '/'");
    return u;
  }
  throw Error("'" + text + "': t5xx reads and writes local paths, file://, gs:// and s3:// URLs, not " +
              scheme + "://; copy the data to one of those");
}

bool IsObjectStoreUrl(const std::string& text) {
  return text.rfind("gs://", 0) == 0 || text.rfind("s3://", 0) == 0;
}

std::string JoinPath(const std::string& base, const std::string& name) {
  if (base.empty()) return name;
  if (name.empty()) return base;
  if (base.back() == '/') return name.front() == '/' ? base + name.substr(1) : base + name;
  return name.front() == '/' ? base + name : base + "/" + name;
}

std::string ParentPath(const std::string& text) {
  std::string t = text;
  while (t.size() > 1 && t.back() == '/') t.pop_back();
  const size_t sep = t.find("://");
  const size_t root_end = sep == std::string::npos ? 0 : t.find('/', sep + 3);
  if (sep != std::string::npos && root_end == std::string::npos) return t;  // the bucket
  const size_t slash = t.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  if (sep != std::string::npos && slash <= root_end) return t.substr(0, root_end);
  return t.substr(0, slash);
}

}  // namespace t5xx::storage
