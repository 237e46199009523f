// See model_dir.h.
#include "t5xx/run/model_dir.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/storage/storage.h"
#include "t5xx/storage/url.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_kind.h"

namespace t5xx::run {

namespace fs = std::filesystem;

void CheckModelDir(const std::string& model_dir) {
  if (storage::IsObjectStoreUrl(model_dir)) {
    const storage::Url u = storage::ParseUrl(model_dir);
    T5XX_CHECK(!u.object.empty(), "MODEL_DIR '" + model_dir +
                                      "' names a bucket, not a directory in it; pass "
                                      "--gin.MODEL_DIR=<scheme>://BUCKET/DIR");
    storage::ListDirectory(model_dir);  // the bucket exists and answers
    return;
  }
  T5XX_CHECK(storage::ParseUrl(model_dir).path == model_dir,
             "MODEL_DIR '" + model_dir + "': give the local path without file://");
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(model_dir, ec))) {
    // train will create it: its nearest existing ancestor must be a
    // writable directory (what create_directories would find out).
    fs::path p = fs::absolute(model_dir, ec).parent_path();
    while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
    const std::string why = NotARegularFile(p.string());
    T5XX_CHECK(why == "is a directory",
               "MODEL_DIR '" + model_dir + "' cannot be created: '" + p.string() + "' " +
                   (why.empty() ? std::string("is a file") : why) +
                   "; pass --gin.MODEL_DIR=<a path under a writable directory>");
    T5XX_CHECK(::access(p.c_str(), W_OK | X_OK) == 0,
               "MODEL_DIR '" + model_dir + "' cannot be created: '" + p.string() +
                   "' is not writable; pass --gin.MODEL_DIR=<a path under a writable directory>");
    return;
  }
  T5XX_CHECK(fs::is_directory(model_dir), "MODEL_DIR '" + model_dir +
                                              "' exists and is not a directory; pass "
                                              "--gin.MODEL_DIR=<a new directory>");
  // An entry named like a checkpoint that is not a directory would clash
  // with a save later in the run: refuse it now.
  static const std::regex checkpoint_name("checkpoint_[0-9]+");
  for (fs::directory_iterator it(model_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    T5XX_CHECK(!std::regex_match(name, checkpoint_name) || fs::is_directory(it->path()),
               "MODEL_DIR '" + model_dir + "' holds " + name +
                   ", which is not a checkpoint directory; move it out of MODEL_DIR (a save "
                   "would need that name)");
  }
  T5XX_CHECK(::access(model_dir.c_str(), W_OK | X_OK) == 0,
             "MODEL_DIR '" + model_dir +
                 "' is not writable; fix its permissions or pass --gin.MODEL_DIR=<a writable "
                 "directory>");
}

std::unique_ptr<checkpoints::BucketModelDir> StageModelDir(std::string& model_dir, std::ostream& log) {
  if (!storage::IsObjectStoreUrl(model_dir)) return nullptr;
  if (const auto env = partitioning::DetectProcessEnvironment(); env && env->local_world_size < env->world_size) {
    throw Error("MODEL_DIR '" + model_dir + "' is in a bucket and the run's " +
                std::to_string(env->world_size) + " processes are on several hosts (" +
                std::to_string(env->local_world_size) +
                " on this one): t5xx writes a bucket's MODEL_DIR through one host's staging "
                "directory; run on one host, or give a MODEL_DIR on a file system every host "
                "mounts");
  }
  auto bucket = std::make_unique<checkpoints::BucketModelDir>(model_dir);
  for (const std::string& line : bucket->Reconcile()) log << "[setup] MODEL_DIR: " << line << std::endl;
  log << "[setup] MODEL_DIR " << bucket->url() << " is staged in " << bucket->local()
      << "; each checkpoint is uploaded once committed, its commit marker last" << std::endl;
  model_dir = bucket->local();
  return bucket;
}

std::vector<std::string> CreateModelDir(const std::string& model_dir,
                                        const std::string& operative_config) {
  std::error_code ec;
  fs::create_directories(model_dir, ec);
  T5XX_CHECK(!ec, "cannot create MODEL_DIR '" + model_dir + "': " + ec.message() +
                      "; pass --gin.MODEL_DIR=<a writable directory>");
  std::ofstream out(model_dir + "/config.gin");
  out << operative_config;
  T5XX_CHECK(out.good(), "cannot write " + model_dir + "/config.gin; check MODEL_DIR");
  return checkpoints::RemoveTemporaryCheckpoints(model_dir);
}

}  // namespace t5xx::run
