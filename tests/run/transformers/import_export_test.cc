// run/transformers/: `t5xx import` of a Transformers directory made here by
// hand (the table's names, values set by index), `t5xx export` back, and
// every bad input refused with nothing written. Transformers itself checks
// the same in tests/interop/transformers_test.py (where it is installed).
#include "t5xx/run/transformers/import.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/checkpoints/transformers/safetensors.h"
#include "t5xx/checkpoints/transformers/transformers_t5.h"
#include "t5xx/config/flags.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/run/transformers/export.h"
#include "test_util.h"

namespace t5xx::run {
namespace {

namespace fs = std::filesystem;
namespace ck = checkpoints;
using t5xx::testing::TempDir;

const std::string kSpm = std::string(T5XX_SOURCE_DIR) +
                         "/tests/testdata/seqio_cache/vocab/interop_upper.model";  // 80 pieces

// vocab 96, d_model 8, 2 heads x 4, d_ff 12, 1 + 1 layers, gated GELU, untied.
std::string ConfigJson(const std::string& extra = "") {
  return R"({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"],
    "vocab_size": 96, "d_model": 8, "d_kv": 4, "num_heads": 2, "d_ff": 12, "num_layers": 1,
    "num_decoder_layers": 1, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false)" +
         extra + "}";
}

std::vector<int64_t> HfShapeOf(const std::string& hf) {
  auto ends = [&](const std::string& s) {
    return hf.size() >= s.size() && hf.compare(hf.size() - s.size(), s.size(), s) == 0;
  };
  if (hf == "shared.weight" || hf == "lm_head.weight") return {96, 8};
  if (ends("relative_attention_bias.weight")) return {32, 2};
  if (ends("layer_norm.weight")) return {8};
  if (ends("wo.weight")) return {8, 12};
  if (ends("wi_0.weight") || ends("wi_1.weight")) return {12, 8};
  return {8, 8};  // q, k, v, o: heads x d_kv = 8
}

// A save_pretrained-like directory: every tensor of the table, element i of
// tensor t holding t * 1000 + i.
struct HfDir {
  explicit HfDir(const std::string& path, const std::string& config = ConfigJson()) : dir(path) {
    fs::create_directories(dir);
    std::ofstream(dir + "/config.json") << config;
    fs::copy_file(kSpm, dir + "/spiece.model");
    std::ofstream(dir + "/tokenizer_config.json") << R"({"tokenizer_class": "T5Tokenizer", "extra_ids": 16})";
    const auto names = ck::TransformersT5Names({1, 1, true, false});
    values.resize(names.size());
    for (size_t t = 0; t < names.size(); ++t) {
      const std::vector<int64_t> shape = HfShapeOf(names[t].hf);
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      for (int64_t i = 0; i < n; ++i) values[t].push_back(static_cast<float>(t * 1000 + i));
      tensors.push_back({names[t].hf, "F32", shape, values[t].data()});
    }
  }
  void Write() const { ck::WriteSafetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}}); }
  std::string dir;
  std::vector<std::vector<float>> values;
  std::vector<ck::SafetensorsTensor> tensors;
};

ModelConfig ModelOfGin(const std::string& gin_file) {
  LoadedTrainConfig loaded = NewTrainConfig();
  loaded.config->AddSearchPath(gin::DefaultConfigDir());  // as --gin_file does
  loaded.config->ParseFile(gin_file);
  return ReadModelMacro(*loaded.config);
}

TEST(TransformersImportExportTest, ImportsTransposesWritesGinAndExportsBack) {
  TempDir tmp;
  HfDir hf(tmp.path + "/hf");
  hf.Write();
  const TransformersImport r = ImportFromTransformers(hf.dir, tmp.path + "/imported");
  EXPECT_EQ(r.weights, "model.safetensors");
  // embedding + lm_head, 2 position biases, 7 norms, 12 attention
  // projections, 2 gated MLPs.
  EXPECT_EQ(r.parameters, 2 * 96 * 8 + 2 * 32 * 2 + 7 * 8 + 12 * 8 * 8 + 2 * 3 * 12 * 8);
  ck::CheckpointReader ckpt(r.checkpoint_dir);
  EXPECT_EQ(ckpt.step(), 0);
  // q.weight [heads*d_kv=8 (out), d_model=8 (in)] is table entry 3 (after
  // shared, the position bias and the first norm); t5x's kernel is [in, out]:
  // kernel[i][o] = weight[o][i] = 3000 + o * 8 + i.
  const ck::LoadedArray q = ckpt.Read("target.encoder.layers_0.attention.query.kernel");
  float k12;
  std::memcpy(&k12, q.bytes.data() + (1 * 8 + 2) * 4, 4);
  EXPECT_EQ(k12, 3000.0f + 2 * 8 + 1);
  // rel_embedding is [heads, buckets]: Transformers' [32, 2] transposed.
  EXPECT_EQ(ckpt.Read("target.encoder.relpos_bias.rel_embedding").shape,
            (std::vector<int64_t>{2, 32}));

  const ModelConfig m = ModelOfGin(r.gin_file);
  EXPECT_EQ(m.t5_config.emb_dim, 8);
  EXPECT_EQ(m.t5_config.mlp_dim, 12);
  EXPECT_EQ(m.t5_config.mlp_activations, (std::vector<std::string>{"gelu", "linear"}));
  EXPECT_FALSE(m.t5_config.logits_via_embedding);
  EXPECT_EQ(m.output_vocabulary.extra_ids, 16);
  EXPECT_EQ(m.output_vocabulary.sentencepiece_model_file,
            fs::path(tmp.path + "/imported/spiece.model").lexically_normal().string());

  const TransformersExport e = ExportToTransformers(m, r.checkpoint_dir, tmp.path + "/exported", "");
  EXPECT_EQ(e.parameters, r.parameters);
  ck::SafetensorsReader back(tmp.path + "/exported/model.safetensors");
  ASSERT_EQ(back.tensors().size(), hf.tensors.size());
  for (size_t t = 0; t < hf.tensors.size(); ++t) {
    const std::vector<uint8_t> bytes = back.Read(hf.tensors[t].name);
    ASSERT_EQ(bytes.size(), hf.values[t].size() * 4) << hf.tensors[t].name;
    EXPECT_EQ(std::memcmp(bytes.data(), hf.values[t].data(), bytes.size()), 0) << hf.tensors[t].name;
  }
  const ck::TransformersT5Config c = ck::ReadTransformersT5Config(tmp.path + "/exported/config.json");
  EXPECT_EQ(c.feed_forward_proj, "gated-gelu");
  EXPECT_EQ(c.d_ff, 12);
  for (const char* f : {"spiece.model", "tokenizer_config.json", "generation_config.json"}) {
    EXPECT_TRUE(fs::exists(tmp.path + "/exported/" + f)) << f;
  }
}

// Each bad directory is refused naming the problem; nothing is written.
TEST(TransformersImportExportTest, BadDirectoriesAreRefusedAndNothingIsWritten) {
  TempDir tmp;
  int n = 0;
  auto refused = [&](HfDir& hf, const std::string& why, bool write = true) {
    if (write) hf.Write();
    const std::string out = tmp.path + "/out" + std::to_string(n++);
    EXPECT_ERROR_CONTAINS(ImportFromTransformers(hf.dir, out), why);
    EXPECT_FALSE(fs::exists(out)) << why;
    for (const auto& e : fs::directory_iterator(tmp.path)) {
      EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
    }
  };
  HfDir bart(tmp.path + "/bart", ConfigJson(R"(, "architectures": ["BartForConditionalGeneration"])"));
  refused(bart, "architectures [\"BartForConditionalGeneration\"]");
  HfDir wide(tmp.path + "/wide", ConfigJson(R"(, "d_ff": 16)"));
  refused(wide, "encoder.block.0.layer.1.DenseReluDense.wi_0.weight is [12, 8]; config.json's "
                "sizes make it [16, 8]");
  HfDir fast(tmp.path + "/fast");
  fs::remove(fast.dir + "/spiece.model");
  fs::remove(fast.dir + "/tokenizer_config.json");
  std::ofstream(fast.dir + "/tokenizer.json") << "{}";
  refused(fast, "no tokenizer t5x can use");
  refused(fast, "(a tokenizer.json alone is not enough)");
  HfDir extra(tmp.path + "/extra");
  const float x[4] = {};
  extra.tensors.push_back({"encoder.block.0.layer.0.SelfAttention.extra_bias", "F32", {4}, x});
  refused(extra, "encoder.block.0.layer.0.SelfAttention.extra_bias (in model.safetensors) is not "
                 "a parameter of a T5 model");
  HfDir ints(tmp.path + "/ints");
  ints.tensors[2].dtype = "I32";
  refused(ints, "has dtype I32 (floating point F32, F16, BF16 or F64 is supported)");
  HfDir bin(tmp.path + "/bin");
  std::ofstream(bin.dir + "/pytorch_model.bin") << "not a zip";
  refused(bin, "not a zip-format torch.save file", false);
  HfDir none(tmp.path + "/none");
  refused(none, "no weights: expected one of model.safetensors", false);
  HfDir buckets(tmp.path + "/buckets", ConfigJson(R"(, "relative_attention_num_buckets": 64)"));
  refused(buckets, "t5x's network fixes them at 32 and 128");
  HfDir small(tmp.path + "/small", ConfigJson(R"(, "vocab_size": 64)"));
  refused(small, "the vocabulary has 96 ids (80 pieces of");
  refused(small, "but the model has vocab_size 64 rows");
  HfDir torn(tmp.path + "/torn");
  std::ofstream(torn.dir + "/spiece.model", std::ios::trunc) << "not a model";
  refused(torn, "spiece.model");
  HfDir sharded(tmp.path + "/sharded");
  fs::create_directories(sharded.dir);
  ck::WriteSafetensors(sharded.dir + "/a.safetensors", sharded.tensors, {});
  nlohmann::json index;
  for (const auto& t : sharded.tensors) index["weight_map"][t.name] = "a.safetensors";
  index["weight_map"]["shared.weight"] = "b.safetensors";
  std::ofstream(sharded.dir + "/model.safetensors.index.json") << index.dump();
  refused(sharded, "weight_map names b.safetensors, which is not a file there", false);
  ck::WriteSafetensors(sharded.dir + "/b.safetensors", {}, {});
  refused(sharded, "weight_map puts 'shared.weight' in b.safetensors, but it is in a.safetensors",
          false);
  HfDir ok(tmp.path + "/ok");
  ok.Write();
  // "out/" (what tab completion writes) is "out"; a parent that is a file is named.
  EXPECT_NO_THROW(ImportFromTransformers(ok.dir, tmp.path + "/slash/"));
  EXPECT_TRUE(fs::exists(tmp.path + "/slash/checkpoint_0/checkpoint"));
  std::ofstream(tmp.path + "/afile") << "x";
  EXPECT_ERROR_CONTAINS(ImportFromTransformers(ok.dir, tmp.path + "/afile/x"),
                        "/afile is not a directory");
  fs::create_directories(tmp.path + "/full");
  std::ofstream(tmp.path + "/full/x") << "x";
  EXPECT_ERROR_CONTAINS(ImportFromTransformers(ok.dir, tmp.path + "/full"),
                        "exists and is not an empty directory");
}

TEST(TransformersImportExportTest, ExportRefusesWhatTransformersCannotHold) {
  TempDir tmp;
  HfDir hf(tmp.path + "/hf");
  hf.Write();
  const TransformersImport r = ImportFromTransformers(hf.dir, tmp.path + "/imported");
  ModelConfig m = ModelOfGin(r.gin_file);
  ModelConfig bigger = m;
  bigger.t5_config.mlp_dim = 16;
  bigger.t5_config.num_decoder_layers = 2;
  const std::string msg =
      t5xx::testing::ErrorOf([&] { ExportToTransformers(bigger, r.checkpoint_dir, tmp.path + "/o1", ""); });
  EXPECT_NE(msg.find("does not hold the parameters of the gin files' model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("target.encoder.layers_0.mlp.wi_0.kernel is [8, 12], the model's is [8, 16]"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("no array target.decoder.layers_1"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(tmp.path + "/o1"));
  ModelConfig lm = m;
  lm.kind = ModelKind::kDecoderOnly;
  EXPECT_ERROR_CONTAINS(ExportToTransformers(lm, r.checkpoint_dir, tmp.path + "/o2", ""),
                        "no decoder-only counterpart");
  ModelConfig odd = m;
  odd.t5_config.mlp_activations = {"gelu", "gelu"};
  EXPECT_ERROR_CONTAINS(ExportToTransformers(odd, r.checkpoint_dir, tmp.path + "/o3", ""),
                        "have no Transformers T5 counterpart");
  // scalable_t5 (umT5): a position table per layer; the message names what
  // is unsupported and the way out, not the gin files (issue 50).
  ModelConfig scalable = m;
  scalable.t5_config.relpos_per_layer = true;
  const std::string umt5 = t5xx::testing::ErrorOf(
      [&] { ExportToTransformers(scalable, r.checkpoint_dir, tmp.path + "/o5", ""); });
  EXPECT_NE(umt5.find("a table per layer (<stack>.layers_<i>.relpos_bias), which is "
                      "Transformers' UMT5 (model_type 'umt5') -- not written by t5xx export yet"),
            std::string::npos) << umt5;
  EXPECT_NE(umt5.find("t5xx convert_checkpoint --scan_layers=true"), std::string::npos) << umt5;
  EXPECT_NE(umt5.find("convert_umt5_checkpoint_to_pytorch.py --scalable_attention"),
            std::string::npos) << umt5;
  EXPECT_EQ(umt5.find("gin files"), std::string::npos) << umt5;
  EXPECT_FALSE(fs::exists(tmp.path + "/o5"));
  ModelConfig remote = m;
  remote.output_vocabulary.sentencepiece_model_file = "gs://t5-data/vocabs/cc_all.32000/sentencepiece.model";
  // Read from the bucket (here: offline, so named with what failed).
  EXPECT_ERROR_CONTAINS(ExportToTransformers(remote, r.checkpoint_dir, tmp.path + "/o4", ""),
                        "cannot read the model's vocabulary (seqio.SentencePieceVocabulary."
                        "sentencepiece_model_file = 'gs://t5-data/vocabs/cc_all.32000/sentencepiece.model'): ");
  EXPECT_FALSE(fs::exists(tmp.path + "/o4"));
}

}  // namespace
}  // namespace t5xx::run
