// SentencePiece, reached through the libt5xx_sentencepiece module (see
// sentencepiece_shim/shim_api.h for why it is loaded with dlopen). This is
// the only way t5xx code calls SentencePiece.
//
// The module is found at $T5XX_SENTENCEPIECE_MODULE if set, else at the path
// the build recorded, else at <dir of the executable>/../lib/. Failing to
// load it is a t5xx::Error naming the paths tried.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct t5xx_spm_model;

namespace t5xx::seqio::spm {

// A loaded SentencePiece model. Const methods are thread-safe.
class Model {
 public:
  // Throws t5xx::Error "<model_file>: <reason>" when the file is missing or
  // is not a SentencePiece model.
  explicit Model(const std::string& model_file);
  // From a serialized ModelProto; `what` names it in errors.
  static std::unique_ptr<Model> FromSerialized(const std::string& bytes,
                                               const std::string& what);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  int piece_size() const;
  int pad_id() const;
  int eos_id() const;
  int unk_id() const;
  int bos_id() const;  // -1 when the model has no BOS
  std::string IdToPiece(int id) const;
  float Score(int id) const;
  // Throws t5xx::Error on a SentencePiece failure.
  std::vector<int32_t> Encode(const std::string& text) const;
  std::string Decode(const std::vector<int32_t>& ids) const;

 private:
  Model() = default;
  std::string model_file_;
  t5xx_spm_model* model_ = nullptr;
};

// SentencePieceTrainer::Train over in-memory sentences with trainer flags
// (key, value) without "--"; returns the serialized ModelProto. Throws
// t5xx::Error with SentencePiece's message. Sets SentencePiece's global seed
// and log level while it runs: do not train twice at once in one process.
std::string Train(const std::vector<std::pair<std::string, std::string>>& args,
           const std::vector<std::string>& sentences, unsigned int seed,
           bool quiet);

}  // namespace t5xx::seqio::spm
