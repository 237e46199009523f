// What a path that should be a readable regular file is instead: the one
// check behind "cannot read X: it is a directory" messages, so that a
// directory, a FIFO (which would block a reader for ever) or a broken
// symbolic link is reported where the path is named, not met later as a
// read error or a hang.
#pragma once

#include <string>

namespace t5xx {

// "" when `path` is (or links to) a regular file; otherwise why not: "does
// not exist", "is a broken symbolic link", "is a directory", or "is not a
// regular file (a FIFO, socket or device)".
std::string NotARegularFile(const std::string& path);

}  // namespace t5xx
