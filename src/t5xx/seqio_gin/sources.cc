// Data sources and vocabularies of gin-defined tasks: their configurables
// (seqio.TextLineDataSource, seqio.TFExampleDataSource,
// t5xx.seqio.JsonLinesDataSource, seqio.SentencePieceVocabulary,
// seqio.ByteVocabulary, seqio.PassThroughVocabulary, seqio.TfdsDataSource)
// and how each is built.
#include <climits>
#include <filesystem>
#include <memory>
#include <optional>

#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/data/dataset_providers/cache_placeholder.h"
#include "t5xx/data/sources/text_line_source.h"
#include "t5xx/data/sources/tfrecord_source.h"
#include "t5xx/data/sources/token_json_lines_source.h"
#include "t5xx/data/tfds/tfds_data_source.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"
#include "t5xx/data/vocabularies/passthrough_vocabulary.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/seqio_gin/builders.h"
#include "t5xx/storage/remote_copy.h"

namespace t5xx::seqio_gin {
namespace {

using gin::Value;

constexpr char kTextLine[] = "seqio.TextLineDataSource";
constexpr char kTFExample[] = "seqio.TFExampleDataSource";
constexpr char kTfds[] = "seqio.TfdsDataSource";
constexpr const char* kJsonLines = seqio::TokenJsonLinesDataSource::kGinName;
constexpr char kSpm[] = "seqio.SentencePieceVocabulary";
constexpr char kByte[] = "seqio.ByteVocabulary";
constexpr char kPassThrough[] = "seqio.PassThroughVocabulary";

// seqio's caching_permitted argument of its data sources.
gin::ParamSpec CachingPermitted() {
  using namespace gin::spec;
  return Optional("caching_permitted", T::kBool, B(true),
                  "False: tasks reading this source may not have a "
                  "seqio.CacheDatasetPlaceholder (seqio's).");
}

// seqio.TfdsDataSource(tfds_name, tfds_data_dir, splits, caching_permitted):
// splits None (every split), a list of names or a dict name -> TFDS split.
seqio::DataSourcePtr BuildTfdsSource(gin::Config& c, const std::string& kind,
                                     const std::string& s, bool caching_permitted) {
  const Value dir = c.Query(kind, "tfds_data_dir", s);
  const Value splits = c.Query(kind, "splits", s);
  std::map<std::string, std::string> split_map;
  if (splits.kind() == Value::Kind::kDict) {
    split_map = gin::StringMap(splits);
  } else if (!splits.is_none()) {
    for (const std::string& name : gin::StringList(splits)) split_map[name] = name;
  }
  return std::make_shared<seqio::TfdsDataSource>(c.Query(kind, "tfds_name", s).AsString(),
                                                 dir.is_none() ? "" : dir.AsString(),
                                                 std::move(split_map), caching_permitted);
}

}  // namespace

seqio::DataSourcePtr BuildSource(BuildContext& ctx, const Value& v, const std::string& outer) {
  const std::string& kind =
      gin::ExpectOneOf(v, {kTextLine, kTFExample, kJsonLines, kTfds}, "a data source");
  const std::string s = gin::CallScope(outer, v);
  gin::Config& c = ctx.config;
  const bool caching_permitted = c.Query(kind, "caching_permitted", s).AsBool();
  seqio::DataSourcePtr source = At(v, [&]() -> seqio::DataSourcePtr {
    if (kind == kTfds) return BuildTfdsSource(c, kind, s, caching_permitted);
    const Value splits = c.Query(kind, "split_to_filepattern", s);
    if (kind == kTextLine) {
      return std::make_shared<seqio::TextLineDataSource>(
          gin::StringMap(splits), gin::Int32(c.Query(kind, "skip_header_lines", s), 0));
    }
    const Value skip = c.Query(kind, "skip_bad_records", s);
    seqio::BadRecordPolicy policy;
    policy.skip = skip.is_none() ? ctx.skip_bad_records : skip.AsBool();
    if (kind == kTFExample) {
      return std::make_shared<seqio::TFExampleDataSource>(
          gin::StringMap(splits), gin::StringList(c.Query(kind, "feature_keys", s)), policy);
    }
    return std::make_shared<seqio::TokenJsonLinesDataSource>(
        gin::StringMap(splits), gin::StringList(c.Query(kind, "fields", s)), policy);
  });
  return seqio::WithCachingPermitted(std::move(source), caching_permitted);
}

seqio::VocabularyPtr BuildVocabulary(BuildContext& ctx, const Value& v, const std::string& outer) {
  const std::string& kind = gin::ExpectOneOf(v, {kSpm, kByte, kPassThrough}, "a vocabulary");
  const std::string s = gin::CallScope(outer, v);
  auto key = std::make_pair(kind, s);
  if (auto it = ctx.vocabularies.find(key); it != ctx.vocabularies.end()) return it->second;
  gin::Config& c = ctx.config;
  seqio::VocabularyPtr out = At(v, [&]() -> seqio::VocabularyPtr {
    if (kind == kSpm) {
      std::string file = c.Query(kind, "sentencepiece_model_file", s).AsString();
      if (IsRemotePath(file)) {
        // gs://t5-data/... as t5x's model gins write it: its copy under
        // --data_dir, else the bucket (storage/remote_copy.h).
        std::optional<std::string> local = ReadableCopy(file, ctx.data_dir);
        T5XX_CHECK(local.has_value(),
                   MissingRemoteCopyMessage(file, ctx.data_dir,
                                            "seqio.SentencePieceVocabulary.sentencepiece_model_file"));
        file = *local;
      }
      namespace fs = std::filesystem;
      if (fs::path(file).is_relative() && !fs::exists(file) && !ctx.data_dir.empty() &&
          fs::exists(fs::path(ctx.data_dir) / file)) {
        file = (fs::path(ctx.data_dir) / file).string();
      }
      return std::make_shared<seqio::SentencePieceVocabulary>(
          file, gin::Int32(c.Query(kind, "extra_ids", s), 0));
    }
    if (kind == kByte) {
      return std::make_shared<seqio::ByteVocabulary>(gin::Int32(c.Query(kind, "extra_ids", s), 0));
    }
    const int64_t size = c.Query(kind, "size", s).AsInt();
    const Value eos = c.Query(kind, "eos_id", s);
    T5XX_CHECK(size >= 1 && size <= INT32_MAX,
               "size must be in [1, 2^31), got " + std::to_string(size));
    return std::make_shared<seqio::PassThroughVocabulary>(
        static_cast<int32_t>(size), eos.is_none() ? -1 : static_cast<int32_t>(eos.AsInt()));
  });
  ctx.vocabularies[key] = out;
  return out;
}

void RegisterSourceConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  r.Register({kTextLine,
              {Required("split_to_filepattern", T::kDict),
               Optional("skip_header_lines", T::kInt, I(0)), CachingPermitted()},
              "One example {'text': line} per line of the files."});
  r.Register({kTFExample,
              {Required("split_to_filepattern", T::kDict),
               Optional("feature_keys", T::kOptionalList, None(),
                        "t5xx only: the tf.Example keys to read (None = all)."),
               Optional("skip_bad_records", T::kOptionalBool, None(),
                        "t5xx only: skip and count records with a bad CRC or an unparsable "
                        "tf.Example instead of failing (None = the --skip_bad_records flag)."),
               CachingPermitted()},
              "TFRecord files of tf.Example."});
  r.Register({kJsonLines,
              {Required("split_to_filepattern", T::kDict),
               Optional("fields", T::kOptionalList, None(), "Fields to read (None = all)."),
               Optional("skip_bad_records", T::kOptionalBool, None(),
                        "Skip and count malformed lines instead of failing (None = the "
                        "--skip_bad_records flag)."),
               CachingPermitted()},
              "JSON lines: string fields become text, arrays of ints become token ids."});
  r.Register({kTfds,
              {Required("tfds_name", T::kString),
               Optional("tfds_data_dir", T::kOptionalString, None(),
                        "Where the data was prepared (before $TFDS_DATA_DIR and "
                        "~/tensorflow_datasets; --tfds_data_dir overrides it)."),
               Optional("splits", T::kAny, None(),
                        "None (every split), a list of split names, or a dict of names to TFDS "
                        "splits ('train[:10%]', 'train+validation')."),
               CachingPermitted()},
              "A dataset TensorFlow Datasets prepared (read without TensorFlow)."});
  r.Register({kSpm,
              {Required("sentencepiece_model_file", T::kString),
               Optional("extra_ids", T::kInt, I(0), "Sentinel ids appended to the vocabulary.")},
              "A SentencePiece vocabulary."});
  r.Register({kByte, {Optional("extra_ids", T::kInt, I(0))}, "The ByT5 byte vocabulary."});
  r.Register({kPassThrough,
              {Required("size", T::kInt), Optional("eos_id", T::kOptionalInt, None())},
              "Identity vocabulary over token ids."});
}

}  // namespace t5xx::seqio_gin
