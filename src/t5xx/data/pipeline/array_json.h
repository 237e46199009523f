// Arrays (example.h) as JSON, two ways:
//  - nested lists, as seqio's and numpy's tolist() show a tensor (what `t5xx
//    data show`, inference outputs and predictions files write): a scalar
//    is a number, a boolean or a string; a rank-n array n nested lists; a
//    ragged one nested by its row lengths;
//  - an exact record for the pipeline's saved state ({"dtype", "shape",
//    "row_lengths", "values"}), read back element for element.
// Framework-free: no libtorch.
#pragma once

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/example.h"

namespace t5xx::seqio {

// Throws t5xx::Error for an array whose element count disagrees with its
// shape and row lengths.
nlohmann::json ArrayToNestedJson(const Array& a);

nlohmann::json ArrayToStateJson(const Array& a);
// Throws t5xx::Error naming `where` for a malformed record.
Array ArrayFromStateJson(const nlohmann::json& j, const std::string& where);

}  // namespace t5xx::seqio
