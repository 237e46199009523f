// See file_kind.h.
#include "t5xx/util/files/file_kind.h"

#include <sys/stat.h>

namespace t5xx {

std::string NotARegularFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    struct stat link;
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      return "is a broken symbolic link";
    }
    return "does not exist";
  }
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "is a directory";
  return "is not a regular file (a FIFO, socket or device)";
}

}  // namespace t5xx
