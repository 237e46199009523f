// The flags that say where task caches are (seqio's global cache
// directories): t5x's --seqio_additional_cache_dirs=a,b (a comma list,
// t5x/train.py passes it to seqio.add_global_cache_dirs) and t5xx's
// repeatable --cache_dir=DIR, taken by train, infer, eval, config and
// `t5xx data` (their help: main.cc's usage); and where TFDS data lies:
// t5x's --tfds_data_dir (t5x/train.py: seqio.set_tfds_data_dir_override).
#pragma once

#include <string>
#include <vector>

namespace t5xx::cli {

// Removes every --seqio_additional_cache_dirs=a,b / --cache_dir=DIR (also
// "--flag VALUE") from `args` and adds their directories, in the order
// given, to seqio's global cache directories (seqio::AddGlobalCacheDirs,
// data/cache/task_cache.h); a --tfds_data_dir=DIR sets seqio's TFDS data
// dir override (data/tfds/tfds_data_source.h). Returns the cache
// directories added. Throws t5xx::Error
// naming `command` and the flag for a missing or empty value (an empty
// item of the comma list included).
std::vector<std::string> TakeCacheDirFlags(std::vector<std::string>& args,
                                           const std::string& command);

}  // namespace t5xx::cli
