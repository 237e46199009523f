// seqio's SentencePieceVocabulary with T5 sentinels (see
// sentencepiece_vocabulary.h).
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"

#include "t5xx/data/vocabularies/sentencepiece_module.h"


#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::seqio {
namespace {

constexpr char kMarkerPrefix[] = "<extra_id_";
constexpr size_t kMarkerPrefixLen = sizeof(kMarkerPrefix) - 1;

// If text[pos..] starts with "<extra_id_N>" with 0 <= N < extra_ids (N
// written without leading zeros), stores N and the marker length.
bool ParseMarker(const std::string& text, size_t pos, int32_t extra_ids,
                 int32_t* n, size_t* len) {
  if (text.compare(pos, kMarkerPrefixLen, kMarkerPrefix) != 0) return false;
  size_t i = pos + kMarkerPrefixLen;
  const size_t digits_begin = i;
  int64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' &&
         i - digits_begin < 10) {
    value = value * 10 + (text[i] - '0');
    ++i;
  }
  const size_t ndigits = i - digits_begin;
  if (ndigits == 0 || i >= text.size() || text[i] != '>') return false;
  if (ndigits > 1 && text[digits_begin] == '0') return false;
  if (value >= extra_ids) return false;
  *n = static_cast<int32_t>(value);
  *len = i + 1 - pos;
  return true;
}

}  // namespace

SentencePieceVocabulary::SentencePieceVocabulary(const std::string& model_file,
                                                 int32_t extra_ids)
    : model_file_(model_file),
      extra_ids_(extra_ids) {
  T5XX_CHECK(extra_ids >= 0, "SentencePieceVocabulary: extra_ids must be >= 0, got " +
                            std::to_string(extra_ids));
  if (!FileExists(model_file)) {
    throw Error("SentencePiece model file not found: '" + model_file + "'");
  }
  sp_ = std::make_unique<spm::Model>(model_file);
  const int pad = sp_->pad_id(), eos = sp_->eos_id(), unk = sp_->unk_id(),
            bos = sp_->bos_id();
  if (pad != 0 || eos != 1 || unk != 2 || bos != -1) {
    throw Error(
        "SentencePiece model '" + model_file +
        "' does not follow the T5 id convention: found pad_id=" +
        std::to_string(pad) + " eos_id=" + std::to_string(eos) +
        " unk_id=" + std::to_string(unk) + " bos_id=" + std::to_string(bos) +
        ", need pad_id=0 eos_id=1 unk_id=2 bos_id=-1 (no BOS). Retrain it "
        "with spm_train ... --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1");
  }
  base_vocab_size_ = sp_->piece_size();
}

SentencePieceVocabulary::~SentencePieceVocabulary() = default;

int32_t SentencePieceVocabulary::ExtraId(int32_t n) const {
  T5XX_CHECK(n >= 0 && n < extra_ids_,
        "extra id " + std::to_string(n) + " out of range: the vocabulary '" +
            model_file_ + "' has " + std::to_string(extra_ids_) +
            " extra ids");
  return vocab_size() - 1 - n;
}

std::string SentencePieceVocabulary::IdToPiece(int32_t id) const {
  T5XX_CHECK(id >= 0 && id < vocab_size(),
        "token id " + std::to_string(id) + " out of range [0, " +
            std::to_string(vocab_size()) + ")");
  if (id >= base_vocab_size_) {
    return "<extra_id_" + std::to_string(vocab_size() - 1 - id) + ">";
  }
  return sp_->IdToPiece(id);
}

std::vector<int32_t> SentencePieceVocabulary::Encode(
    const std::string& text) const {
  std::vector<int32_t> out;
  auto encode_piece = [&](size_t begin, size_t end) {
    if (begin >= end) return;
    const std::vector<int32_t> ids = sp_->Encode(text.substr(begin, end - begin));
    out.insert(out.end(), ids.begin(), ids.end());
  };
  size_t start = 0;  // beginning of the pending plain-text stretch
  if (extra_ids_ > 0) {
    size_t pos = text.find(kMarkerPrefix);
    while (pos != std::string::npos) {
      int32_t n = 0;
      size_t len = 0;
      if (ParseMarker(text, pos, extra_ids_, &n, &len)) {
        encode_piece(start, pos);
        out.push_back(vocab_size() - 1 - n);
        start = pos + len;
        pos = text.find(kMarkerPrefix, start);
      } else {
        pos = text.find(kMarkerPrefix, pos + 1);
      }
    }
  }
  encode_piece(start, text.size());
  return out;
}

std::string SentencePieceVocabulary::Decode(
    const std::vector<int32_t>& ids) const {
  std::vector<std::string> parts;
  std::vector<int32_t> run;
  auto flush = [&]() {
    if (run.empty()) return;
    std::string s = sp_->Decode(run);
    if (!s.empty()) parts.push_back(std::move(s));
    run.clear();
  };
  const int32_t vsize = vocab_size();
  for (int32_t id : ids) {
    if (id >= base_vocab_size_ && id < vsize) {
      flush();
      parts.push_back("<extra_id_" + std::to_string(vsize - 1 - id) + ">");
      continue;
    }
    if (id < 0 || id >= vsize) id = unk_id();
    run.push_back(id);
    if (id == eos_id()) break;  // cut after the first EOS (kept, renders "")
  }
  flush();
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ' ';
    out += p;
  }
  return out;
}

}  // namespace t5xx::seqio
