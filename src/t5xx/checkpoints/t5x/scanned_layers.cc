// See scanned_layers.h.
#include "t5xx/checkpoints/t5x/scanned_layers.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/checkpoints/t5x/scanned_layers_internal.h"
#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
using scan_internal::EndsWith;
using scan_internal::IsOutKernel;
using scan_internal::IsQkvKernel;
using scan_internal::LayerName;
using scan_internal::ParseLayerName;
using scan_internal::Product;

std::map<std::string, LoadedArray> StackLayers(const std::map<std::string, LoadedArray>& arrays,
                                               const ScanLayout& layout) {
  std::map<std::string, LoadedArray> out;
  std::map<std::string, std::map<int64_t, const LoadedArray*>> stacks;  // scanned name -> layers
  std::map<std::string, std::string> rest_of;
  for (const auto& [name, a] : arrays) {
    const std::optional<LayerName> l = ParseLayerName(name);
    if (!l) {
      out[name] = a;
      continue;
    }
    const std::string scanned = l->stack + "." + l->stack + "." + l->rest;
    stacks[scanned][l->index] = &a;
    rest_of[scanned] = l->rest;
  }
  for (const auto& [scanned, layers] : stacks) {
    const int64_t n = static_cast<int64_t>(layers.size());
    T5XX_CHECK(layers.begin()->first == 0 && layers.rbegin()->first == n - 1,
               scanned + ": the layers are not 0.." + std::to_string(n - 1) +
                   " (a layer's array is missing)");
    const LoadedArray& first = *layers.begin()->second;
    std::vector<int64_t> shape = first.shape;
    const std::string& rest = rest_of[scanned];
    if ((IsQkvKernel(rest) || IsOutKernel(rest)) && shape.size() == 2) {
      const int64_t joined = IsQkvKernel(rest) ? shape[1] : shape[0];
      T5XX_CHECK(layout.num_heads > 0 && joined % layout.num_heads == 0,
                 scanned + ": heads*kv = " + std::to_string(joined) +
                     " is not a multiple of num_heads = " + std::to_string(layout.num_heads));
      const int64_t kv = joined / layout.num_heads;
      shape = IsQkvKernel(rest) ? std::vector<int64_t>{shape[0], layout.num_heads, kv}
                                : std::vector<int64_t>{layout.num_heads, kv, shape[1]};
    }
    const int axis = layout.param_scan_axis;
    T5XX_CHECK(axis >= 0 && axis <= static_cast<int>(shape.size()),
               scanned + ": param_scan_axis = " + std::to_string(axis) + " is outside a rank-" +
                   std::to_string(shape.size()) + " parameter stacked to rank " +
                   std::to_string(shape.size() + 1));
    const size_t item = DTypeSize(first.dtype);
    const int64_t outer = Product(shape, 0, axis);
    const int64_t inner = Product(shape, axis, shape.size()) * static_cast<int64_t>(item);
    LoadedArray stacked;
    stacked.dtype = first.dtype;
    stacked.shape = shape;
    stacked.shape.insert(stacked.shape.begin() + axis, n);
    stacked.bytes.resize(static_cast<size_t>(outer * n * inner));
    for (const auto& [i, a] : layers) {
      T5XX_CHECK(a->dtype == first.dtype && a->shape == first.shape &&
                     static_cast<int64_t>(a->bytes.size()) == outer * inner,
                 scanned + ": layer " + std::to_string(i) + " is " + ShapeString(a->shape) +
                     " " + DTypeName(a->dtype) + ", layer 0 " + ShapeString(first.shape) + " " +
                     DTypeName(first.dtype));
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(stacked.bytes.data() + (o * n + i) * inner, a->bytes.data() + o * inner,
                    static_cast<size_t>(inner));
      }
    }
    out[scanned] = std::move(stacked);
  }
  return out;
}

std::map<std::string, LoadedArray> UnstackLayers(const std::map<std::string, LoadedArray>& arrays,
                                                 const ScanLayout& layout) {
  std::map<std::string, LoadedArray> out;
  // Every array of a stack has the same layer count on the scan axis; a
  // different count means the arrays were stacked on another axis.
  std::map<std::string, std::pair<int64_t, std::string>> layers_of;
  for (const auto& [name, a] : arrays) {
    std::string stack;
    for (const char* s : {"encoder", "decoder"}) {
      if (name.rfind(std::string(s) + "." + s + ".", 0) == 0) stack = s;
    }
    if (stack.empty()) {
      out[name] = a;
      continue;
    }
    const std::string rest = name.substr(2 * stack.size() + 2);
    const int axis = layout.param_scan_axis;
    T5XX_CHECK(axis >= 0 && axis < static_cast<int>(a.shape.size()),
               name + ": shape " + ShapeString(a.shape) + " has no axis " +
                   std::to_string(axis) + " (param_scan_axis) to unstack");
    const int64_t n = a.shape[axis];
    auto [seen, fresh] = layers_of.emplace(stack, std::make_pair(n, name));
    T5XX_CHECK(fresh || seen->second.first == n,
               "param_scan_axis = " + std::to_string(axis) + " gives " + name + " " +
                   std::to_string(n) + " layers but " + seen->second.second + " " +
                   std::to_string(seen->second.first) +
                   ": the checkpoint was stacked on another axis (t5x's default is 1)");
    std::vector<int64_t> shape = a.shape;
    shape.erase(shape.begin() + axis);
    const size_t item = DTypeSize(a.dtype);
    const int64_t outer = Product(a.shape, 0, axis);
    const int64_t inner = Product(a.shape, axis + 1, a.shape.size()) * static_cast<int64_t>(item);
    T5XX_CHECK(static_cast<int64_t>(a.bytes.size()) == outer * n * inner,
               name + ": " + std::to_string(a.bytes.size()) + " bytes for shape " +
                   ShapeString(a.shape));
    if (IsQkvKernel(rest) || IsOutKernel(rest)) {
      T5XX_CHECK(shape.size() == 3, name + ": a stacked attention kernel is 4-D ([embed, layers, "
                                           "heads, kv] or [heads, layers, kv, embed]), not " +
                                        ShapeString(a.shape));
      shape = IsQkvKernel(rest) ? std::vector<int64_t>{shape[0], shape[1] * shape[2]}
                                : std::vector<int64_t>{shape[0] * shape[1], shape[2]};
    }
    for (int64_t i = 0; i < n; ++i) {
      LoadedArray layer;
      layer.dtype = a.dtype;
      layer.shape = shape;
      layer.bytes.resize(static_cast<size_t>(outer * inner));
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(layer.bytes.data() + o * inner, a.bytes.data() + (o * n + i) * inner,
                    static_cast<size_t>(inner));
      }
      out[stack + ".layers_" + std::to_string(i) + "." + rest] = std::move(layer);
    }
  }
  return out;
}

ScanConversion ConvertScanLayout(const std::string& checkpoint_dir,
                                 const std::string& output_model_dir, bool to_scanned,
                                 int param_scan_axis) {
  {
    std::error_code ec;
    const std::filesystem::path in = std::filesystem::weakly_canonical(checkpoint_dir, ec);
    const std::filesystem::path to = std::filesystem::weakly_canonical(output_model_dir, ec);
    const auto [mismatch, rest] = std::mismatch(in.begin(), in.end(), to.begin(), to.end());
    T5XX_CHECK(mismatch != in.end(), "the output directory " + output_model_dir +
                                         " is inside the checkpoint being converted, " +
                                         checkpoint_dir + "; give a directory outside it");
  }
  CheckpointReader reader(checkpoint_dir);
  ScanConversion out;
  out.step = reader.step();
  std::map<std::string, StateArrayBytes> arrays;
  int64_t heads = 0;
  bool scanned_in = false, per_layer_in = false;
  for (const auto& [path, entry] : reader.arrays()) {
    if (path.rfind("target.", 0) == 0) {
      ++out.arrays_in;
      const std::string name = path.substr(7);
      if (EndsWith(name, "relpos_bias.rel_embedding") && !entry.shape.empty()) {
        heads = entry.shape[0];
        scanned_in |=
            name.rfind("encoder.encoder.", 0) == 0 || name.rfind("decoder.decoder.", 0) == 0;
        per_layer_in |= ParseLayerName(name).has_value();
      }
    } else {
      ++out.state_arrays;
    }
    arrays[path] = {reader.Read(path), entry.inline_array.has_value()};
  }
  T5XX_CHECK(heads > 0 && (scanned_in || per_layer_in),
             checkpoint_dir + " has no per-layer relative position tables "
             "(<stack>.layers_<i>.relpos_bias or <stack>.<stack>.relpos_bias): not a checkpoint "
             "of t5x's scalable_t5 network, whose layout this converts");
  T5XX_CHECK(to_scanned ? per_layer_in : scanned_in,
             checkpoint_dir + " is already " + (to_scanned ? "scanned" : "per layer") +
                 "; nothing to convert");
  const ScanLayout layout{heads, param_scan_axis};
  const std::map<std::string, StateArrayBytes> converted =
      to_scanned ? StackTrainState(arrays, layout) : UnstackTrainState(arrays, layout);
  std::vector<ArrayRef> refs;
  for (const auto& [path, a] : converted) {
    ArrayRef ref;
    ref.path = path;
    ref.dtype = a.array.dtype;
    ref.shape = a.array.shape;
    ref.data = a.array.bytes.data();
    ref.store_inline = a.store_inline;
    refs.push_back(std::move(ref));
    if (path.rfind("target.", 0) == 0) ++out.arrays_out;
  }
  out.checkpoint_dir = SaveCheckpoint(output_model_dir, out.step, refs);
  return out;
}

}  // namespace t5xx::checkpoints
