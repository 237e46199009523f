// cuDNN's fused attention graphs -- the implementation of cudnn_sdpa.h.
// Compiled only in a CUDA build that found cudnn-frontend's headers
// (kernels/CMakeLists.txt); libcudnn is loaded at run time by the
// frontend's shim (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING), finding the
// copy libtorch already loaded.
#include "t5xx/kernels/cuda/cudnn_sdpa.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "t5xx/util/error.h"

#include <dlfcn.h>

// The frontend's shim resolves every cuDNN call through this handle
// (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING leaves its definition to the user).
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend

namespace t5xx::kernels::cuda {
namespace {

namespace fe = cudnn_frontend;

// The variant pack's tensor ids.
enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kBias, kSeqQ, kSeqKv, kDo, kDq, kDk, kDv, kDbias };

void Check(fe::error_t status, const char* step) {
  T5XX_CHECK(status.is_good(),
             std::string("cuDNN fused attention: ") + step + ": " + status.get_message());
}

cudnnHandle_t HandleFor(int device) {
  static std::mutex mutex;
  static std::map<int, cudnnHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  if (!fe::cudnn_dlhandle) {
    // The libcudnn libtorch loaded (its soname), else whichever the loader finds.
    fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    if (!fe::cudnn_dlhandle) fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW);
    T5XX_CHECK(fe::cudnn_dlhandle != nullptr,
               std::string("cuDNN fused attention: cannot load libcudnn.so.9: ") + dlerror());
  }
  cudnnHandle_t h = nullptr;
  T5XX_CHECK(fe::detail::create_handle(&h) == CUDNN_STATUS_SUCCESS,
             "cuDNN fused attention: cudnnCreate failed (is libcudnn 9 loadable?)");
  handles[device] = h;
  return h;
}

fe::DataType_t IoType(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
}

std::shared_ptr<fe::graph::Tensor_attributes> Input(fe::graph::Graph& g, const char* name,
                                                    Uid uid, const at::Tensor& t) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(t.sizes().vec())
                      .set_stride(t.strides().vec()));
}

std::shared_ptr<fe::graph::Tensor_attributes> Lengths(fe::graph::Graph& g, const char* name,
                                                      Uid uid, int64_t b) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({b, 1, 1, 1})
                      .set_stride({1, 1, 1, 1})
                      .set_data_type(fe::DataType_t::INT32));
}

std::vector<int64_t> Contiguous(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// What decides a graph: shapes, strides, dtype, options, device.
using Key = std::tuple<bool, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>,
                       std::vector<int64_t>, std::vector<int64_t>, int, bool, bool, bool, bool,
                       int>;
Key KeyOf(bool backward, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
          const at::Tensor& bias, bool lengths, bool causal, bool dbias) {
  return {backward,
          q.sizes().vec(),
          q.strides().vec(),
          k.strides().vec(),
          v.strides().vec(),
          bias.defined() ? bias.strides().vec() : std::vector<int64_t>{},
          static_cast<int>(q.scalar_type()),
          bias.defined(),
          lengths,
          causal,
          dbias,
          q.get_device()};
}

struct Built {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
};

Built Finish(std::shared_ptr<fe::graph::Graph> g, cudnnHandle_t handle) {
  Check(g->validate(), "validate");
  Check(g->build_operation_graph(handle), "build_operation_graph");
  Check(g->create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans");
  Check(g->check_support(handle), "check_support (no cuDNN kernel for these shapes/options)");
  Check(g->build_plans(handle), "build_plans");
  Built b{std::move(g), 0};
  Check(b.graph->get_workspace_size(b.workspace), "get_workspace_size");
  return b;
}

std::shared_ptr<fe::graph::Graph> NewGraph(const at::Tensor& q) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(IoType(q))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

const Built& Cached(const Key& key, const std::function<Built()>& build) {
  static std::mutex mutex;
  static std::map<Key, Built> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, build()).first;
  return it->second;
}

void Execute(const Built& b, cudnnHandle_t handle, std::unordered_map<int64_t, void*>& pack,
             const at::Tensor& like) {
  const at::Tensor workspace =
      at::empty({std::max<int64_t>(b.workspace, 1)}, like.options().dtype(at::kByte));
  Check(b.graph->execute(handle, pack, workspace.data_ptr()), "execute");
}

}  // namespace

SdpaForward CudnnSdpaForward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& bias, const at::Tensor& q_lengths,
                             const at::Tensor& kv_lengths, bool causal) {
  const c10::cuda::CUDAGuard guard(q.device());
  const int64_t b = q.size(0), h = q.size(1), sq = q.size(2);
  const bool lengths = q_lengths.defined();
  cudnnHandle_t handle = HandleFor(q.get_device());
  fe::detail::set_stream(handle, at::cuda::getCurrentCUDAStream().stream());
  const Built& built = Cached(KeyOf(false, q, k, v, bias, lengths, causal, false), [&] {
    auto g = NewGraph(q);
    auto Q = Input(*g, "Q", kQ, q), K = Input(*g, "K", kK, k), V = Input(*g, "V", kV, v);
    auto options = fe::graph::SDPA_attributes()
                       .set_name("t5xx_attention")
                       .set_generate_stats(true)
                       .set_attn_scale(1.0f)
                       .set_causal_mask(causal);
    if (bias.defined()) options.set_bias(Input(*g, "bias", kBias, bias));
    if (lengths) {
      options.set_padding_mask(true)
          .set_seq_len_q(Lengths(*g, "seq_q", kSeqQ, b))
          .set_seq_len_kv(Lengths(*g, "seq_kv", kSeqKv, b));
    }
    auto [O, Stats] = g->sdpa(Q, K, V, options);
    O->set_output(true).set_uid(kO).set_dim(q.sizes().vec()).set_stride(Contiguous(q.sizes().vec()));
    Stats->set_output(true)
        .set_uid(kStats)
        .set_data_type(fe::DataType_t::FLOAT)
        .set_dim({b, h, sq, 1})
        .set_stride({h * sq, sq, 1, 1});
    return Finish(g, handle);
  });
  SdpaForward out{at::empty(q.sizes(), q.options().memory_format(at::MemoryFormat::Contiguous)),
                  at::empty({b, h, sq, 1}, q.options().dtype(at::kFloat))};
  std::unordered_map<int64_t, void*> pack = {{kQ, q.data_ptr()},        {kK, k.data_ptr()},
                                             {kV, v.data_ptr()},        {kO, out.out.data_ptr()},
                                             {kStats, out.stats.data_ptr()}};
  if (bias.defined()) pack[kBias] = bias.data_ptr();
  if (lengths) {
    pack[kSeqQ] = q_lengths.data_ptr();
    pack[kSeqKv] = kv_lengths.data_ptr();
  }
  Execute(built, handle, pack, q);
  return out;
}

SdpaGrads CudnnSdpaBackward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& bias, const at::Tensor& q_lengths,
                            const at::Tensor& kv_lengths, bool causal, const SdpaForward& fwd,
                            const at::Tensor& dout_in, bool want_dbias) {
  const c10::cuda::CUDAGuard guard(q.device());
  const at::Tensor dout = dout_in.contiguous();
  const int64_t b = q.size(0);
  const bool lengths = q_lengths.defined();
  cudnnHandle_t handle = HandleFor(q.get_device());
  fe::detail::set_stream(handle, at::cuda::getCurrentCUDAStream().stream());
  const Built& built = Cached(KeyOf(true, q, k, v, bias, lengths, causal, want_dbias), [&] {
    auto g = NewGraph(q);
    auto Q = Input(*g, "Q", kQ, q), K = Input(*g, "K", kK, k), V = Input(*g, "V", kV, v);
    auto O = Input(*g, "O", kO, fwd.out), dO = Input(*g, "dO", kDo, dout);
    auto Stats = Input(*g, "stats", kStats, fwd.stats);
    Stats->set_data_type(fe::DataType_t::FLOAT);
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("t5xx_attention_backward")
                       .set_attn_scale(1.0f)
                       .set_causal_mask(causal);
    if (bias.defined()) {
      options.set_bias(Input(*g, "bias", kBias, bias));
      if (want_dbias) {
        options.set_dbias(g->tensor(fe::graph::Tensor_attributes()
                                        .set_name("dbias")
                                        .set_uid(kDbias)
                                        .set_dim(bias.sizes().vec())
                                        .set_stride(Contiguous(bias.sizes().vec()))));
      }
    }
    if (lengths) {
      options.set_padding_mask(true)
          .set_seq_len_q(Lengths(*g, "seq_q", kSeqQ, b))
          .set_seq_len_kv(Lengths(*g, "seq_kv", kSeqKv, b));
    }
    auto [dQ, dK, dV] = g->sdpa_backward(Q, K, V, O, dO, Stats, options);
    dQ->set_output(true).set_uid(kDq).set_dim(q.sizes().vec()).set_stride(Contiguous(q.sizes().vec()));
    dK->set_output(true).set_uid(kDk).set_dim(k.sizes().vec()).set_stride(Contiguous(k.sizes().vec()));
    dV->set_output(true).set_uid(kDv).set_dim(v.sizes().vec()).set_stride(Contiguous(v.sizes().vec()));
    return Finish(g, handle);
  });
  SdpaGrads grads{at::empty(q.sizes(), q.options().memory_format(at::MemoryFormat::Contiguous)),
                  at::empty(k.sizes(), k.options().memory_format(at::MemoryFormat::Contiguous)),
                  at::empty(v.sizes(), v.options().memory_format(at::MemoryFormat::Contiguous)),
                  at::Tensor()};
  std::unordered_map<int64_t, void*> pack = {
      {kQ, q.data_ptr()},         {kK, k.data_ptr()},          {kV, v.data_ptr()},
      {kO, fwd.out.data_ptr()},   {kStats, fwd.stats.data_ptr()}, {kDo, dout.data_ptr()},
      {kDq, grads.dq.data_ptr()}, {kDk, grads.dk.data_ptr()},  {kDv, grads.dv.data_ptr()}};
  if (bias.defined()) {
    pack[kBias] = bias.data_ptr();
    if (want_dbias) {
      grads.dbias = at::empty(bias.sizes(), bias.options().memory_format(at::MemoryFormat::Contiguous));
      pack[kDbias] = grads.dbias.data_ptr();
    }
  }
  if (lengths) {
    pack[kSeqQ] = q_lengths.data_ptr();
    pack[kSeqKv] = kv_lengths.data_ptr();
  }
  Execute(built, handle, pack, q);
  return grads;
}

}  // namespace t5xx::kernels::cuda
