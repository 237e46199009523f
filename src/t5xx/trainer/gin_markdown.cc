// gin.markdown: the operative config as a Markdown text summary.
#include "t5xx/trainer/gin_markdown.h"

#include <vector>

namespace t5xx::trainer {

std::string GinMarkdown(const std::string& config_str) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < config_str.size()) {
    size_t end = config_str.find('\n', pos);
    if (end == std::string::npos) end = config_str.size();
    lines.push_back(config_str.substr(pos, end - pos));
    pos = end + 1;
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (line.rfind('#', 0) != 0) {
      line = "    " + line;
    } else {
      line = line.size() > 2 ? line.substr(2) : "";
      if (line.rfind("====", 0) == 0) {
        line = "";
      } else if (line.rfind("None", 0) == 0) {
        line = "    # None.";
      } else if (!line.empty() && line.back() == ':') {
        line = "#### " + line;
      }
    }
    out += (i ? "\n" : "") + line;
  }
  return out;
}

}  // namespace t5xx::trainer
