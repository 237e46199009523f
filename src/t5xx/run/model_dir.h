// MODEL_DIR, the run's output folder (t5x's model_dir): the check that a run
// may use it, done before anything is written, and its creation with the
// operative config (t5x writes config.gin there at start-up).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "t5xx/checkpoints/bucket_model_dir.h"

namespace t5xx::run {

// MODEL_DIR must be a writable directory (or creatable: its nearest
// existing ancestor a writable directory). One that holds checkpoints is
// resumed from its latest (run/restore.h), as in t5x. A gs:// or s3://
// MODEL_DIR must be listable (the bucket exists, the credentials are
// accepted). Throws t5xx::Error saying what to pass instead.
void CheckModelDir(const std::string& model_dir);

// MODEL_DIR in a bucket (gs://, s3://): returns its BucketModelDir,
// reconciled with the bucket (what that did is logged to `log`), and
// replaces `model_dir` by its staging directory; nullptr, `model_dir`
// unchanged, for a local one. Throws t5xx::Error naming the URL when the
// bucket cannot be read or written, and when the run's processes are on
// several hosts (their parts of a sharded save meet in one staging
// directory, which hosts do not share).
std::unique_ptr<checkpoints::BucketModelDir> StageModelDir(std::string& model_dir, std::ostream& log);

// Creates MODEL_DIR, writes `operative_config` to MODEL_DIR/config.gin and
// removes the unfinished checkpoint_<N>.tmp-* directories an interrupted
// save left, returning their paths. Throws t5xx::Error when any fails.
std::vector<std::string> CreateModelDir(const std::string& model_dir,
                                        const std::string& operative_config);

}  // namespace t5xx::run
