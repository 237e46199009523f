// A train state (parameters and optimizer slots) between the per-layer and
// t5x's scanned layout -- the train-state part of scanned_layers.h.
#include <algorithm>
#include <cstring>
#include <set>

#include "t5xx/checkpoints/t5x/scanned_layers.h"
#include "t5xx/checkpoints/t5x/scanned_layers_internal.h"
#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace {

using scan_internal::EndsWith;
using scan_internal::IsOutKernel;
using scan_internal::IsQkvKernel;
using scan_internal::ParseLayerName;
using scan_internal::Product;

// One layer of a stacked parameter as t5x holds it (3-D attention kernels)
// and how t5xx's per-layer dims map onto it.
struct LayerForm {
  std::vector<int64_t> shape3;               // one layer, as t5x holds it
  std::vector<std::vector<int64_t>> groups;  // t5xx dim -> dims of shape3
  int64_t embed = -1;                        // shape3's embed dim (v_row keeps it), or -1
};

// The 'embed' dim of a kernel t5x's standard rules factor (ROW), in its
// per-layer form as t5x holds it; -1 for arrays they leave unfactored.
int64_t EmbedDimOf(const std::string& rest) {
  if (IsQkvKernel(rest)) return 0;
  if (IsOutKernel(rest)) return 2;
  if (rest.find("mlp.wi") != std::string::npos && EndsWith(rest, ".kernel")) return 0;
  if (EndsWith(rest, "mlp.wo.kernel")) return 1;
  return -1;
}

// The form of a t5xx per-layer parameter `rest` of shape `shape`.
LayerForm FormOfPerLayer(const std::string& rest, const std::vector<int64_t>& shape,
                         int64_t heads, const std::string& what) {
  LayerForm f;
  f.embed = EmbedDimOf(rest);
  if ((IsQkvKernel(rest) || IsOutKernel(rest)) && shape.size() == 2) {
    const bool qkv = IsQkvKernel(rest);
    const int64_t joined = qkv ? shape[1] : shape[0];
    T5XX_CHECK(heads > 0 && joined % heads == 0,
               what + ": heads*kv = " + std::to_string(joined) +
                   " is not a multiple of num_heads = " + std::to_string(heads));
    f.shape3 = qkv ? std::vector<int64_t>{shape[0], heads, joined / heads}
                   : std::vector<int64_t>{heads, joined / heads, shape[1]};
    f.groups = qkv ? std::vector<std::vector<int64_t>>{{0}, {1, 2}}
                   : std::vector<std::vector<int64_t>>{{0, 1}, {2}};
    return f;
  }
  f.shape3 = shape;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) f.groups.push_back({d});
  return f;
}

// The t5xx per-layer shape of the 3-D dims `kept` (ascending) of `f`.
std::vector<int64_t> PerLayerShapeOf(const LayerForm& f, const std::vector<int64_t>& kept,
                                     const std::string& what) {
  std::vector<int64_t> out;
  for (const auto& g : f.groups) {
    int64_t size = 1, in = 0;
    for (int64_t d : g) {
      if (std::find(kept.begin(), kept.end(), d) != kept.end()) {
        size *= f.shape3[d];
        ++in;
      }
    }
    T5XX_CHECK(in == 0 || in == static_cast<int64_t>(g.size()),
               what + " keeps only one of the heads and kv dims of its attention kernel, which "
                      "t5xx holds joined ([embed, heads*kv]); map 'heads' and 'kv' to the same "
                      "factor dim in adafactor.Adafactor.logical_factor_rules");
    if (in) out.push_back(size);
  }
  return out;
}

std::vector<int64_t> Take(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(shape[d]);
  return out;
}

std::vector<int64_t> Range(size_t n) {
  std::vector<int64_t> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<int64_t>(i);
  return d;
}

// The 3-D dims a slot keeps, found from its name and shape (`shape_of(kept)`
// gives the shape the slot has when it keeps `kept`); nullopt for a (1,)
// placeholder. Throws naming `what` when no choice fits.
template <typename ShapeOf>
std::optional<std::vector<int64_t>> InferKept(const LayerForm& f, const std::string& slot_path,
                                              const std::vector<int64_t>& slot_shape,
                                              ShapeOf shape_of, const std::string& what) {
  const std::vector<int64_t> all = Range(f.shape3.size());
  if (slot_shape == shape_of(all)) return all;
  if (slot_shape == std::vector<int64_t>{1}) return std::nullopt;
  if (f.embed >= 0 && (EndsWith(slot_path, ".v_row") || EndsWith(slot_path, ".v_col"))) {
    std::vector<int64_t> kept;
    for (int64_t d : all) {
      if ((d == f.embed) == EndsWith(slot_path, ".v_row")) kept.push_back(d);
    }
    if (slot_shape == shape_of(kept)) return kept;
  }
  throw Error(what + ": shape " + ShapeString(slot_shape) +
              " fits no slot of its parameter (the parameter's shape, a (1,) placeholder, or "
              "v_row/v_col as t5x's standard_logical_factor_rules factor scalable_t5)");
}

// Copies layer `i` (row-major `layer_shape`) into / out of a stacked array
// with `layers` layers at `axis`.
void PutLayer(std::vector<uint8_t>& stacked, const std::vector<int64_t>& layer_shape, int axis,
              int64_t layers, int64_t i, const uint8_t* src, size_t item) {
  const int64_t outer = Product(layer_shape, 0, axis);
  const int64_t inner = Product(layer_shape, axis, layer_shape.size()) * static_cast<int64_t>(item);
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(stacked.data() + (o * layers + i) * inner, src + o * inner,
                static_cast<size_t>(inner));
  }
}
std::vector<uint8_t> TakeLayer(const std::vector<uint8_t>& stacked,
                               const std::vector<int64_t>& layer_shape, int axis, int64_t layers,
                               int64_t i, size_t item) {
  const int64_t outer = Product(layer_shape, 0, axis);
  const int64_t inner = Product(layer_shape, axis, layer_shape.size()) * static_cast<int64_t>(item);
  std::vector<uint8_t> out(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(out.data() + o * inner, stacked.data() + (o * layers + i) * inner,
                static_cast<size_t>(inner));
  }
  return out;
}

// Where `<stack>.layers_<i>.` (per layer) or `<stack>.<stack>.` (scanned)
// starts in `path` (at its start or after a '.'), with the stack; npos if
// nowhere.
std::pair<size_t, std::string> FindStack(const std::string& path, bool scanned) {
  for (const char* s : {"encoder", "decoder"}) {
    const std::string key = std::string(s) + (scanned ? "." + std::string(s) + "." : ".layers_");
    for (size_t at = path.find(key); at != std::string::npos; at = path.find(key, at + 1)) {
      if (at == 0 || path[at - 1] == '.') return {at, s};
    }
  }
  return {std::string::npos, ""};
}

// The longest name in `names` (a stack's parameters, "<rest>") that
// `tail` starts with, followed by '.' or the end.
std::string LongestParam(const std::string& tail, const std::set<std::string>& names) {
  std::string best;
  for (const std::string& n : names) {
    if (tail.rfind(n, 0) == 0 && (tail.size() == n.size() || tail[n.size()] == '.') &&
        n.size() > best.size()) {
      best = n;
    }
  }
  return best;
}

}  // namespace

std::optional<std::string> ScannedNameOf(const std::string& per_layer_name) {
  const auto l = ParseLayerName(per_layer_name);
  if (!l) return std::nullopt;
  return l->stack + "." + l->stack + "." + l->rest;
}

ScannedStatePlan::ScannedStatePlan(const std::map<std::string, std::vector<int64_t>>& params,
                                   ScanLayout layout)
    : params_(params), layout_(layout) {
  for (const auto& [name, shape] : params) {
    if (const auto l = ParseLayerName(name)) {
      layers_[l->stack] = std::max(layers_[l->stack], l->index + 1);
    }
  }
}

std::optional<ScannedPlace> ScannedStatePlan::PlaceOf(
    const std::string& path, const std::vector<int64_t>& shape,
    const std::optional<std::vector<int64_t>>& param_dims) const {
  const auto [at, stack] = FindStack(path, false);
  if (at == std::string::npos) return std::nullopt;
  const size_t dot = path.find('.', at + stack.size() + 8);
  if (dot == std::string::npos) return std::nullopt;
  const auto l = ParseLayerName(path.substr(at, dot - at + 1) + "x");
  if (!l) return std::nullopt;
  const std::string tail = path.substr(dot + 1);
  std::set<std::string> names;
  const std::string prefix = stack + ".layers_" + std::to_string(l->index) + ".";
  for (const auto& [name, s] : params_) {
    if (name.rfind(prefix, 0) == 0) names.insert(name.substr(prefix.size()));
  }
  const std::string rest = LongestParam(tail, names);
  T5XX_CHECK(!rest.empty(), path + ": names no parameter of layer " + std::to_string(l->index) +
                                " of the " + stack);
  const std::vector<int64_t>& pshape = params_.at(prefix + rest);
  const LayerForm f = FormOfPerLayer(rest, pshape, layout_.num_heads, path);
  const int a = layout_.param_scan_axis;
  T5XX_CHECK(a >= 0 && a <= static_cast<int>(f.shape3.size()),
             path + ": param_scan_axis = " + std::to_string(a) + " is outside a rank-" +
                 std::to_string(f.shape3.size()) + " parameter stacked to rank " +
                 std::to_string(f.shape3.size() + 1));
  ScannedPlace p;
  p.path = path.substr(0, at) + stack + "." + stack + "." + tail;
  p.layer = l->index;
  std::optional<std::vector<int64_t>> kept;
  if (path.rfind("target.", 0) == 0) {
    kept = Range(f.shape3.size());
  } else if (param_dims && !(param_dims->empty() && shape == std::vector<int64_t>{1})) {
    kept.emplace();
    for (int64_t d : *param_dims) {
      T5XX_CHECK(d >= 0 && d < static_cast<int64_t>(f.groups.size()),
                 path + ": parameter dim " + std::to_string(d) + " out of range");
      kept->insert(kept->end(), f.groups[d].begin(), f.groups[d].end());
    }
    std::sort(kept->begin(), kept->end());
  } else if (!param_dims) {
    kept = InferKept(
        f, path, shape, [&](const std::vector<int64_t>& k) { return PerLayerShapeOf(f, k, path); },
        path);
  }
  if (!kept) {  // a (1,) placeholder
    p.axis = -1;
    p.shape = p.layer_shape = {1};
    return p;
  }
  T5XX_CHECK(PerLayerShapeOf(f, *kept, path) == shape,
             path + ": shape " + ShapeString(shape) + " is not what its parameter dims give, " +
                 ShapeString(PerLayerShapeOf(f, *kept, path)));
  p.layer_shape = Take(f.shape3, *kept);
  p.axis = static_cast<int>(std::count_if(kept->begin(), kept->end(),
                                          [&](int64_t d) { return d < a; }));
  p.shape = p.layer_shape;
  p.shape.insert(p.shape.begin() + p.axis, layers_.at(stack));
  return p;
}

std::map<std::string, StateArrayBytes> StackTrainState(
    const std::map<std::string, StateArrayBytes>& arrays, const ScanLayout& layout,
    const std::map<std::string, std::vector<int64_t>>& slot_param_dims) {
  std::map<std::string, std::vector<int64_t>> params;
  for (const auto& [path, a] : arrays) {
    if (path.rfind("target.", 0) == 0) params[path.substr(7)] = a.array.shape;
  }
  const ScannedStatePlan plan(params, layout);
  std::map<std::string, StateArrayBytes> out;
  std::map<std::string, std::set<int64_t>> filled;
  std::map<std::string, std::string> first_of;  // scanned path -> its first per-layer path
  for (const auto& [path, a] : arrays) {
    const auto dims = slot_param_dims.find(path);
    const std::optional<ScannedPlace> p = plan.PlaceOf(
        path, a.array.shape,
        dims == slot_param_dims.end() ? std::nullopt : std::optional(dims->second));
    if (!p) {
      out[path] = a;
      continue;
    }
    auto [it, fresh] = out.try_emplace(p->path);
    StateArrayBytes& s = it->second;
    const size_t item = DTypeSize(a.array.dtype);
    if (fresh) {
      s.array.dtype = a.array.dtype;
      s.array.shape = p->shape;
      s.array.bytes.resize(static_cast<size_t>(Product(p->shape, 0, p->shape.size())) * item);
      s.store_inline = a.store_inline;
      first_of[p->path] = path;
    }
    T5XX_CHECK(s.array.dtype == a.array.dtype && s.array.shape == p->shape,
               path + " (" + DTypeName(a.array.dtype) + ") does not stack with " +
                   first_of[p->path] + " (" + DTypeName(s.array.dtype) + ") into " + p->path +
                   " " + ShapeString(s.array.shape));
    filled[p->path].insert(p->layer);
    if (p->axis < 0) {
      s.array.bytes = a.array.bytes;
      continue;
    }
    PutLayer(s.array.bytes, p->layer_shape, p->axis, p->shape[p->axis], p->layer,
             a.array.bytes.data(), item);
  }
  for (const auto& [path, layers] : filled) {
    const int64_t want = *layers.rbegin() + 1;
    T5XX_CHECK(static_cast<int64_t>(layers.size()) == want,
               path + ": a layer's array is missing (" + std::to_string(layers.size()) + " of " +
                   std::to_string(want) + ")");
  }
  return out;
}

std::map<std::string, StateArrayBytes> UnstackTrainState(
    const std::map<std::string, StateArrayBytes>& arrays, const ScanLayout& layout) {
  std::map<std::string, LoadedArray> target;
  for (const auto& [path, a] : arrays) {
    if (path.rfind("target.", 0) == 0) target[path.substr(7)] = a.array;
  }
  std::map<std::string, StateArrayBytes> out;
  for (auto& [name, a] : UnstackLayers(target, layout)) {
    out["target." + name] = {std::move(a), false};
  }
  const int axis = layout.param_scan_axis;
  for (const auto& [path, a] : arrays) {
    if (path.rfind("target.", 0) == 0) continue;
    const auto [at, stack] = FindStack(path, true);
    if (at == std::string::npos) {
      out[path] = a;
      continue;
    }
    const std::string tail = path.substr(at + 2 * stack.size() + 2);
    std::set<std::string> names;
    const std::string prefix = stack + "." + stack + ".";
    for (const auto& [name, t] : target) {
      if (name.rfind(prefix, 0) == 0) names.insert(name.substr(prefix.size()));
    }
    const std::string rest = LongestParam(tail, names);
    T5XX_CHECK(!rest.empty(), path + ": names no stacked parameter of the " + stack);
    const std::vector<int64_t>& stacked = target.at(prefix + rest).shape;
    const int64_t n = stacked[axis];  // UnstackLayers checked the axis
    std::vector<int64_t> shape3 = stacked;
    shape3.erase(shape3.begin() + axis);
    // t5xx's shape (joined attention kernels, which UnstackLayers checked
    // are 3-D per layer) and the heads that split it again.
    std::vector<int64_t> per_layer = shape3;
    int64_t heads = 0;
    if (IsQkvKernel(rest)) {
      per_layer = {shape3[0], shape3[1] * shape3[2]};
      heads = shape3[1];
    } else if (IsOutKernel(rest)) {
      per_layer = {shape3[0] * shape3[1], shape3[2]};
      heads = shape3[0];
    }
    const LayerForm f = FormOfPerLayer(rest, per_layer, heads, path);
    auto slot_axis_of = [&](const std::vector<int64_t>& kept) {
      return static_cast<int>(
          std::count_if(kept.begin(), kept.end(), [&](int64_t d) { return d < axis; }));
    };
    auto stacked_shape = [&](const std::vector<int64_t>& kept) {
      std::vector<int64_t> s = Take(f.shape3, kept);
      s.insert(s.begin() + slot_axis_of(kept), n);
      return s;
    };
    const auto kept = InferKept(f, path, a.array.shape, stacked_shape, path);
    const size_t item = DTypeSize(a.array.dtype);
    for (int64_t i = 0; i < n; ++i) {
      StateArrayBytes s;
      s.store_inline = a.store_inline;
      s.array.dtype = a.array.dtype;
      if (!kept) {
        s.array = a.array;
      } else {
        s.array.shape = PerLayerShapeOf(f, *kept, path);
        s.array.bytes =
            TakeLayer(a.array.bytes, Take(f.shape3, *kept), slot_axis_of(*kept), n, i, item);
      }
      out[path.substr(0, at) + stack + ".layers_" + std::to_string(i) + "." + tail] = std::move(s);
    }
  }
  return out;
}

}  // namespace t5xx::checkpoints
