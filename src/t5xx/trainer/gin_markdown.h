// The operative gin config as the TensorBoard text summary "config":
// gin.markdown (gin/config.py), as t5x's summarize_gin_config writes it.
#pragma once

#include <string>

namespace t5xx::trainer {

// gin.markdown(config_str) (gin/config.py): comment lines lose their "# "
// ("====" rules become empty, "None" becomes "    # None.", a line ending in
// ':' becomes a "#### " header); every other line is indented by 4 spaces.
std::string GinMarkdown(const std::string& config_str);

}  // namespace t5xx::trainer
