// libt5xx_sentencepiece: see shim_api.h for why this is a separate module.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "shim_api.h"

// Exported by libsentencepiece but not declared in its public headers.
namespace sentencepiece::logging {
int GetMinLogLevel();
void SetMinLogLevel(int v);
}  // namespace sentencepiece::logging

struct t5xx_spm_model {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

char* CopyString(const std::string& s, size_t* len = nullptr) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  if (len) *len = s.size();
  return p;
}

int Fail(char** error, const std::string& message) {
  if (error) *error = CopyString(message);
  return 1;
}

// Runs `body` (returning 0 or a Fail code) with every C++ exception turned
// into an error return: none may cross the C interface. SentencePiece throws
// for some malformed models (e.g. Darts' "zero-length key" for an empty
// piece) instead of returning a Status.
template <typename Body>
int Guarded(char** error, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Fail(error, std::string("SentencePiece failed: ") + e.what());
  } catch (...) {
    return Fail(error, "SentencePiece failed with an unknown exception");
  }
}

class VectorIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorIterator(const std::vector<std::string>* v) : v_(v) {}
  bool done() const override { return i_ >= v_->size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return (*v_)[i_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>* v_;
  size_t i_ = 0;
};

}  // namespace

extern "C" {

int t5xx_spm_abi_version(void) { return T5XX_SPM_SHIM_ABI_VERSION; }

void t5xx_spm_free_buffer(void* p) { std::free(p); }

int t5xx_spm_load(const char* model_file, t5xx_spm_model** model, char** error) {
  return Guarded(error, [&] {
    auto m = std::make_unique<t5xx_spm_model>();
    const auto status = m->processor.Load(model_file);
    if (!status.ok()) return Fail(error, status.ToString());
    *model = m.release();
    return 0;
  });
}

int t5xx_spm_load_serialized(const char* bytes, size_t len, t5xx_spm_model** model,
                             char** error) {
  return Guarded(error, [&] {
    auto m = std::make_unique<t5xx_spm_model>();
    const auto status = m->processor.LoadFromSerializedProto(std::string(bytes, len));
    if (!status.ok()) return Fail(error, status.ToString());
    *model = m.release();
    return 0;
  });
}

void t5xx_spm_free(t5xx_spm_model* model) { delete model; }

float t5xx_spm_score(const t5xx_spm_model* model, int id) {
  return model->processor.GetScore(id);
}

int t5xx_spm_piece_size(const t5xx_spm_model* model) {
  return model->processor.GetPieceSize();
}

int t5xx_spm_special_id(const t5xx_spm_model* model, int which) {
  switch (which) {
    case 0: return model->processor.pad_id();
    case 1: return model->processor.eos_id();
    case 2: return model->processor.unk_id();
    case 3: return model->processor.bos_id();
    default: return -1;
  }
}

int t5xx_spm_id_to_piece(const t5xx_spm_model* model, int id, char** piece,
                         size_t* piece_len) {
  *piece = CopyString(model->processor.IdToPiece(id), piece_len);
  return *piece ? 0 : 1;
}

int t5xx_spm_encode(const t5xx_spm_model* model, const char* text,
                    size_t text_len, int32_t** ids, size_t* num_ids,
                    char** error) {
  return Guarded(error, [&] {
    std::vector<int> out;
    const auto status =
        model->processor.Encode(std::string(text, text_len), &out);
    if (!status.ok()) return Fail(error, status.ToString());
    *num_ids = out.size();
    *ids = static_cast<int32_t*>(std::malloc(sizeof(int32_t) * (out.size() + 1)));
    if (!*ids) return Fail(error, "out of memory");
    for (size_t i = 0; i < out.size(); ++i) (*ids)[i] = out[i];
    return 0;
  });
}

int t5xx_spm_decode(const t5xx_spm_model* model, const int32_t* ids,
                    size_t num_ids, char** text, size_t* text_len,
                    char** error) {
  return Guarded(error, [&] {
    std::vector<int> in(ids, ids + num_ids);
    std::string out;
    const auto status = model->processor.Decode(in, &out);
    if (!status.ok()) return Fail(error, status.ToString());
    *text = CopyString(out, text_len);
    return *text ? 0 : Fail(error, "out of memory");
  });
}

int t5xx_spm_train(const char* const* args, size_t num_args,
                   const char* const* sentences, const size_t* sentence_lens,
                   size_t num_sentences, unsigned int seed, int quiet,
                   char** model, size_t* model_len, char** error) {
  return Guarded(error, [&] {
    std::unordered_map<std::string, std::string> kwargs;
    for (size_t i = 0; i < num_args; ++i) kwargs[args[2 * i]] = args[2 * i + 1];
    std::vector<std::string> text;
    text.reserve(num_sentences);
    for (size_t i = 0; i < num_sentences; ++i) {
      text.emplace_back(sentences[i], sentence_lens[i]);
    }
    sentencepiece::SetRandomGeneratorSeed(seed);
    const int old_level = sentencepiece::logging::GetMinLogLevel();
    if (quiet) sentencepiece::logging::SetMinLogLevel(1);
    VectorIterator it(&text);
    std::string serialized;
    const auto status = sentencepiece::SentencePieceTrainer::Train(kwargs, &it, &serialized);
    sentencepiece::logging::SetMinLogLevel(old_level);
    if (!status.ok()) return Fail(error, status.ToString());
    *model = CopyString(serialized, model_len);
    return *model ? 0 : Fail(error, "out of memory");
  });
}

}  // extern "C"
