// Task postprocessors (seqio Task.postprocess_fn) (see postprocessors.h).
#include "t5xx/data/dataset_providers/postprocessors.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "t5xx/util/error.h"

namespace t5xx::seqio {

namespace postprocessors {

PostprocessFn string_to_float(double default_value) {
  return [default_value](const std::string& text, const Example&, bool) -> PostprocessedValue {
    // Python float() accepts surrounding whitespace only.
    const size_t b = text.find_first_not_of(" \t\n\r\f\v");
    if (b == std::string::npos) return default_value;
    const size_t e = text.find_last_not_of(" \t\n\r\f\v");
    const std::string s = text.substr(b, e - b + 1);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    // strtod also reads hex floats ("0x1p3"), which Python's float() refuses.
    const bool hex = s.find('x') != std::string::npos || s.find('X') != std::string::npos;
    if (end != s.c_str() + s.size() || hex) return default_value;
    return v;
  };
}

PostprocessFn lower_text() {
  return [](const std::string& text, const Example&, bool) -> PostprocessedValue {
    std::string out = text;
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  };
}

PostprocessFn string_label_to_class_id(std::vector<std::string> label_classes,
                                       int64_t default_value) {
  T5XX_CHECK(!label_classes.empty(),
        "t5.data.postprocessors.string_label_to_class_id: label_classes is empty; bind "
        "string_label_to_class_id.label_classes = ['negative', 'positive'] (for example)");
  return [label_classes = std::move(label_classes), default_value](
             const std::string& text, const Example&, bool) -> PostprocessedValue {
    for (size_t i = 0; i < label_classes.size(); ++i) {
      if (label_classes[i] == text) return static_cast<int64_t>(i);
    }
    return default_value;
  };
}

PostprocessFn qa() {
  return [](const std::string& text, const Example& example,
            bool is_target) -> PostprocessedValue {
    if (!is_target) return text;
    auto it = example.find("answers");
    T5XX_CHECK(it != example.end() && std::holds_alternative<std::string>(it->second),
          "t5.data.postprocessors.qa: the example has no string feature 'answers' to take the "
          "reference answers from; keep 'answers' in the task's examples");
    return std::vector<std::string>{std::get<std::string>(it->second)};
  };
}

}  // namespace postprocessors
}  // namespace t5xx::seqio
