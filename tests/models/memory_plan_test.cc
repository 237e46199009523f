// MemoryPlan against hand arithmetic (formulas in memory_plan.h).
#include "t5xx/models/memory_plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/networks/t5_config.h"

namespace t5xx::models {
namespace {

TEST(MemoryPlanTest, OptimizerSlots) {
  OptimizerSlots ada;  // factored, min dim 128
  // [512, 256]: both dims >= 128 -> v_row + v_col = 512 + 256.
  EXPECT_EQ(OptimizerSlotElements({512, 256}, ada), 768);
  // [512, 64]: second dim < 128 -> unfactored v.
  EXPECT_EQ(OptimizerSlotElements({512, 64}, ada), 512 * 64);
  EXPECT_EQ(OptimizerSlotElements({300}, ada), 300);
  // Factoring is decided on the global shape (a [512, 64] piece alone would
  // not be factored). A [512, 64] piece of a [512, 256] kernel (columns
  // split 4 ways) keeps its 512 rows' statistic and its 64 columns'.
  EXPECT_EQ(OptimizerSlotElements({512, 256}, ada, {512, 64}), 512 + 64);
  // Split 4 ways on the rows: 128 rows' statistic + all 256 columns.
  EXPECT_EQ(OptimizerSlotElements({512, 256}, ada, {128, 256}), 128 + 256);
  ada.momentum = true;  // + m
  EXPECT_EQ(OptimizerSlotElements({512, 256}, ada), 768 + 512 * 256);
  OptimizerSlots adamw;
  adamw.kind = OptimizerSlots::Kind::kAdamW;
  EXPECT_EQ(OptimizerSlotElements({10, 3}, adamw), 60);
}

TEST(MemoryPlanTest, DecoderOnlyByHand) {
  DecoderOnlyConfig c;
  c.vocab_size = 100;
  c.emb_dim = 8;
  c.num_heads = 2;
  c.head_dim = 4;
  c.num_layers = 3;
  c.mlp_dim = 16;
  c.mlp_activations = {"gelu", "linear"};
  DecoderOnlyTransformer net(c);
  std::vector<std::vector<int64_t>> shapes;
  // (The store is named: a range-for over params() of a temporary would
  // read it after its end, as ASan found.)
  const auto store = net.InitParams(0);
  for (const auto& p : store.params()) shapes.push_back(p.value.sizes().vec());
  MemoryPlan plan;
  SetStateBytes(shapes, OptimizerSlots{}, /*checkpoints=*/true, plan);
  // Parameters: embedding 800, relpos 2*32=64, per layer 2 norms (16) +
  // q,k,v,out 4*64=256 + wi_0, wi_1, wo 3*128=384 -> 656, x3 = 1968, final
  // norm 8, logits_dense 800: N = 800+64+1968+8+800 = 3640.
  EXPECT_EQ(plan.parameters, 4 * 3640);
  EXPECT_EQ(plan.gradients, 4 * 3640);
  // No dim reaches 128: every slot is unfactored -> 3640 elements.
  EXPECT_EQ(plan.optimizer_state, 4 * 3640);
  EXPECT_EQ(plan.checkpoint_copy, 4 * (3640 + 3640));
  // A MultiOptimizer training only the embedding (800): state for it alone.
  std::vector<bool> has_state;
  for (const auto& p : store.params()) {
    has_state.push_back(p.name.find("embedding") != std::string::npos &&
                        p.name.find("rel") == std::string::npos);  // not the relpos table
  }
  MemoryPlan frozen;
  SetStateBytes(shapes, OptimizerSlots{}, /*checkpoints=*/true, frozen, {}, has_state);
  EXPECT_EQ(frozen.parameters, 4 * 3640);
  EXPECT_EQ(frozen.optimizer_state, 4 * 800);
  EXPECT_EQ(frozen.checkpoint_copy, 4 * (3640 + 800));
  // Per layer, a=4, L=K=10, E=8, HD=8, H=2, F=16, A=2:
  //   4*10*(32 + 32 + 3*16) + 4*2*10*10 = 4480 + 800 = 5280
  // logits 4*10*100*2 = 8000; backward workspace 5280; per sequence
  // 3*5280 + 5280 + 8000 = 29120; x2.
  EXPECT_EQ(DecoderOnlyActivationBytes(c, /*batch=*/2, /*length=*/10), 2 * 29120);
  // Heads, MLP units and vocabulary split in two: HD=4, H=1, F=8, V=50:
  //   4*10*(32 + 16 + 24) + 4*1*100 = 3280; logits 4000; 4*3280 + 4000.
  EXPECT_EQ(DecoderOnlyActivationBytes(c, 2, 10, ActivationSplit{2, 2, 2}), 2 * 17120);
  // remat 'full': inputs 4*10*8 = 320 per layer; plus the recomputed layer
  // and the workspace: 3*320 + 2*5280 + 8000 = 19520 per sequence.
  c.remat_policy = "full";
  EXPECT_EQ(DecoderOnlyActivationBytes(c, 2, 10), 2 * 19520);
  // remat 'minimal': input, q/k/v, both output projections and the two MLP
  // input projections, 4*10*(3*8 + 3*8 + 2*16) = 3200 per layer; the
  // recomputed layer adds only what is not kept (5280 - 3200):
  // 3*3200 + 2080 + 5280 + 8000 = 24960.
  c.remat_policy = "minimal";
  EXPECT_EQ(DecoderOnlyActivationBytes(c, 2, 10), 2 * 24960);
  // bf16 activations: a=2 halves the layers (logits stay float32):
  // 3*2640 + 2640 + 8000 = 18560.
  c.remat_policy = "none";
  c.dtype = "bfloat16";
  EXPECT_EQ(DecoderOnlyActivationBytes(c, 2, 10), 2 * 18560);
}

TEST(MemoryPlanTest, EncoderDecoderByHand) {
  T5Config c;
  c.vocab_size = 100;
  c.emb_dim = 8;
  c.num_heads = 2;
  c.head_dim = 4;
  c.num_encoder_layers = 1;
  c.num_decoder_layers = 1;
  c.mlp_dim = 16;
  c.mlp_activations = {"gelu", "linear"};
  // Encoder layer (L=K=10): 4*10*112 + 4*2*100 = 5280. Decoder layer (L=6):
  // self 4*6*112 + 4*2*36 = 2976, cross-attention 4*(2*6*8 + 2*6*8 + 2*10*8)
  // + 4*2*6*10 = 1408 + 480: 4864. Workspace: the larger, 5280. Logits
  // 4*6*100*2 = 4800. Total 5280 + 4864 + 5280 + 4800 = 20224.
  EXPECT_EQ(EncoderDecoderActivationBytes(c, /*batch=*/1, /*encoder=*/10, /*decoder=*/6), 20224);
}

// The peak is the runtime plus the largest of start-up, step and save.
TEST(MemoryPlanTest, PeakIsTheLargestPhase) {
  MemoryPlan p;
  p.runtime = 100;
  p.parameters = 10;
  p.optimizer_state = 5;
  p.gradients = 10;
  p.activations = 30;
  p.gathered_weights = 4;
  p.gradient_buckets = 6;
  p.startup_transient = 1;
  p.checkpoint_copy = 15;
  EXPECT_EQ(p.peak(), 100 + 10 + 5 + 10 + 30 + 4 + 6);  // the step
  p.checkpoint_copy = 70;
  EXPECT_EQ(p.peak(), 100 + 10 + 5 + 70);  // the save
  p.startup_transient = 200;
  EXPECT_EQ(p.peak(), 100 + 10 + 200);  // start-up
  EXPECT_NE(p.ToString().find("peak 0.00 GiB"), std::string::npos) << p.ToString();
  p.activations = static_cast<int64_t>(9e18);
  p.gathered_weights = static_cast<int64_t>(9e18);
  EXPECT_EQ(p.peak(), SaturatingBytes(1e30));  // saturates, never wraps
}

// A memory cgroup's headroom (limit - usage) caps what a process may use;
// the tightest of the cgroup and its ancestors counts; "max" and v1's
// huge "no limit" are no cap. Files laid out as the kernel does.
TEST(MemoryPlanTest, CgroupHeadroomFromV1AndV2Files) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("t5xx_cgroup_test_" + std::to_string(getpid()));
  auto write = [](const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  };
  // v1: /a capped at 6 GiB with 1 GiB used; /a/b unlimited with 0.5 GiB.
  write(root / "memory/a/memory.limit_in_bytes", "6442450944");
  write(root / "memory/a/memory.usage_in_bytes", "1073741824");
  write(root / "memory/a/b/memory.limit_in_bytes", "9223372036854771712");
  write(root / "memory/a/b/memory.usage_in_bytes", "536870912");
  write(root / "self_v1", "12:pids:/x\n4:memory:/a/b\n");
  EXPECT_EQ(CgroupMemoryHeadroomBytes((root / "self_v1").string(), root.string()),
            6442450944 - 1073741824);
  // v2: /c with memory.max 2000 and 500 in use; its child unlimited.
  write(root / "c/memory.max", "2000");
  write(root / "c/memory.current", "500");
  write(root / "c/d/memory.max", "max");
  write(root / "c/d/memory.current", "100");
  write(root / "self_v2", "0::/c/d\n");
  EXPECT_EQ(CgroupMemoryHeadroomBytes((root / "self_v2").string(), root.string()), 1500);
  // No memory controller line: no cap.
  write(root / "self_none", "3:cpu:/a\n");
  EXPECT_EQ(CgroupMemoryHeadroomBytes((root / "self_none").string(), root.string()), -1);
  std::filesystem::remove_all(root);
}

TEST(MemoryPlanTest, AvailableHostMemoryIsPositiveOnLinux) {
  EXPECT_GT(AvailableHostMemoryBytes(), 0);
}

}  // namespace
}  // namespace t5xx::models
