// Restoring a train state from a t5x legacy checkpoint with t5x's
// RestoreCheckpointConfig options (see checkpoint_restore.h).
#include "t5xx/trainer/checkpoint_restore.h"

#include <ATen/core/grad_mode.h>
#include <atomic>
#include <cctype>
#include <map>
#include <regex>
#include <set>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/parallel_for.h"

namespace t5xx::trainer {
namespace {

// t5x's flattened key: "target/encoder/layers_0/..." from a dotted path.
std::string SlashKey(std::string dotted) {
  for (char& c : dotted) {
    if (c == '.') c = '/';
  }
  return dotted;
}

std::string Shape(at::IntArrayRef s) { return checkpoints::ShapeString(s.vec()); }

at::ScalarType TorchDType(checkpoints::DType d) {
  switch (d) {
    case checkpoints::DType::kFloat32: return at::kFloat;
    case checkpoints::DType::kBFloat16: return at::kBFloat16;
    case checkpoints::DType::kInt32: return at::kInt;
    case checkpoints::DType::kInt64: return at::kLong;
  }
  return at::kFloat;
}

// Python's re.Match.expand syntax (\1, \g<1>, \g<name> is not supported)
// in std::regex's format syntax ($1).
std::string ToFormat(const std::string& repl) {
  std::string out;
  for (size_t i = 0; i < repl.size(); ++i) {
    const char c = repl[i];
    if (c == '$') {
      out += "$$";
    } else if (c == '\\' && i + 1 < repl.size() && std::isdigit(static_cast<unsigned char>(repl[i + 1]))) {
      out += '$';
      out += repl[++i];
    } else if (c == '\\' && repl.compare(i, 3, "\\g<") == 0) {
      const size_t close = repl.find('>', i);
      if (close == std::string::npos) throw Error("bad group reference in '" + repl + "'");
      out += '$' + repl.substr(i + 3, close - i - 3);
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

struct Want {
  std::string key;  // model key, '/'-joined
  at::Tensor live;
  bool is_state;
  std::string source;  // the checkpoint's dotted path; empty = not restored
  std::optional<checkpoints::Box> box;  // the owned slice; nullopt = all
};

// t5x's key of the optimizer step in its flattened state.
const std::string kStepKey = "state/step";

// One assignment_map rule, compiled.
struct Rule {
  std::string pattern;
  std::regex re;
  std::optional<std::string> format;  // nullopt: the key maps to None
  bool used = false;
};

// The rules of options.assignment_map. Throws t5xx::Error listing every
// pattern that is not a valid regex.
std::vector<Rule> CompileRules(const RestoreOptions& options) {
  std::vector<Rule> rules;
  std::vector<std::string> problems;
  for (const auto& [pattern, repl] : options.assignment_map) {
    try {
      rules.push_back({pattern, std::regex(pattern, std::regex::ECMAScript),
                       repl ? std::optional<std::string>(ToFormat(*repl)) : std::nullopt});
    } catch (const std::regex_error& e) {
      problems.push_back("assignment_map pattern '" + pattern + "' is not a valid regex: " +
                         e.what());
    }
  }
  if (!problems.empty()) {
    std::string msg = "utils.RestoreCheckpointConfig.assignment_map:";
    for (const std::string& p : problems) msg += "\n  " + p;
    throw Error(msg);
  }
  return rules;
}

// The first rule that fully matches `key` (marked used; its groups in `m`),
// or null.
const Rule* FirstMatch(std::vector<Rule>& rules, const std::string& key, std::smatch& m) {
  for (Rule& r : rules) {
    if (std::regex_match(key, m, r.re)) {
      r.used = true;
      return &r;
    }
  }
  return nullptr;
}

}  // namespace

std::function<checkpoints::Box(const std::string&, const std::vector<int64_t>&)> OwnedSlices(
    const std::vector<partitioning::VariableInfo>& layout) {
  std::map<std::string, partitioning::VariableInfo> rows;  // by slash key
  for (const partitioning::VariableInfo& v : layout) rows[SlashKey(v.name)] = v;
  return [rows = std::move(rows)](const std::string& key, const std::vector<int64_t>& shape) {
    checkpoints::Box whole{std::vector<int64_t>(shape.size(), 0), shape};
    const auto it = rows.find(key);
    if (it == rows.end()) return whole;
    const partitioning::VariableInfo& v = it->second;
    if (shape == v.shape) return checkpoints::Box{v.box.origin, v.box.shape};
    if (shape.size() != v.shape.size()) return whole;
    // Another global shape: this process's share of it, where it divides.
    checkpoints::Box box = whole;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (v.box.shape[d] == v.shape[d] || v.box.shape[d] == 0) continue;
      const int64_t parts = v.shape[d] / v.box.shape[d];
      const int64_t index = v.box.origin[d] / v.box.shape[d];
      if (shape[d] % parts != 0) return whole;
      box.shape[d] = shape[d] / parts;
      box.origin[d] = index * box.shape[d];
    }
    return box;
  };
}

std::vector<partitioning::SlotShape> SlotShapes(const optim::Optimizer& optimizer) {
  std::vector<partitioning::SlotShape> slots;
  for (const optim::StateArray& a : optimizer.StateArrays()) {
    slots.push_back({a.path, a.value.sizes().vec(), static_cast<int64_t>(a.value.element_size()),
                     a.param_dims});
  }
  return slots;
}

bool RestoresStep(const RestoreOptions& options) {
  std::vector<Rule> rules = CompileRules(options);
  std::smatch m;
  const Rule* r = FirstMatch(rules, kStepKey, m);
  return !r || r->format.has_value();
}

namespace {

// What matching the model's arrays to a checkpoint's found wrong, by kind.
struct Mismatches {
  std::vector<std::string> missing, mismatched, extra;
  bool missing_target = false, missing_state = false;
};

// Matches one array of the model to the checkpoint (through the rules):
// sets w.source (and w.box) when it is read, else adds a note or a problem.
void MatchWant(Want& w, const checkpoints::CheckpointReader& reader,
               const std::map<std::string, std::string>& ckpt_path_of, std::vector<Rule>& rules,
               const RestoreOptions& options, std::set<std::string>& used_ckpt,
               RestoreReport& report, Mismatches& bad) {
  std::string source = w.key;
  std::smatch m;
  if (const Rule* r = FirstMatch(rules, w.key, m)) {
    // The checkpoint's array of the same name is accounted for: the rule
    // replaced or dropped it (t5x's apply_assignment_map does not re-add
    // an explicitly skipped key).
    used_ckpt.insert(w.key);
    if (!r->format) {
      report.notes.push_back(w.key + ": not restored (assignment_map maps it to None); keeps "
                             "its fresh initialisation");
      return;
    }
    source = m.format(*r->format);
  }
  const auto it = ckpt_path_of.find(source);
  if (it == ckpt_path_of.end()) {
    const std::string from = source == w.key ? "" : " (as " + source + ")";
    if (!w.is_state && options.fallback_to_scratch) {
      report.notes.push_back(w.key + from + ": not in the checkpoint; initialised from "
                             "scratch (fallback_to_scratch)");
    } else if (w.is_state && !options.strict) {
      report.notes.push_back(w.key + from + ": not in the checkpoint; the optimizer slot "
                             "starts from scratch (strict = False)");
    } else {
      bad.missing.push_back("  missing from the checkpoint: " + w.key + from + " " +
                            Shape(w.live.sizes()));
      (w.is_state ? bad.missing_state : bad.missing_target) = true;
    }
    return;
  }
  used_ckpt.insert(source);
  const checkpoints::IndexEntry& entry = reader.arrays().at(it->second);
  if (options.owned_slice) {
    w.box = options.owned_slice(w.key, entry.shape);
    if (w.box->shape != w.live.sizes().vec()) {
      bad.mismatched.push_back("  shape differs: " + w.key + " is " + Shape(w.live.sizes()) +
                               " in the model but its slice at " +
                               checkpoints::ShapeString(w.box->origin) + " is " +
                               checkpoints::ShapeString(w.box->shape) + " of " +
                               checkpoints::ShapeString(entry.shape) + " in the checkpoint");
      return;
    }
  } else if (entry.shape != w.live.sizes().vec()) {
    bad.mismatched.push_back("  shape differs: " + w.key +
                             (source == w.key ? "" : " (from " + source + ")") + " is " +
                             Shape(w.live.sizes()) + " in the model but " +
                             checkpoints::ShapeString(entry.shape) + " in the checkpoint");
    return;
  }
  w.source = it->second;
}

// Throws the one error that lists every problem and what fixes each kind.
void ThrowIfMismatched(const std::string& checkpoint_dir, const std::vector<Rule>& rules,
                       const Mismatches& bad) {
  std::vector<std::string> problems;
  for (const Rule& r : rules) {
    if (!r.used) {
      problems.push_back("  assignment_map pattern '" + r.pattern +
                         "' matches no key of the model (t5x requires every rule to match)");
    }
  }
  problems.insert(problems.end(), bad.missing.begin(), bad.missing.end());
  problems.insert(problems.end(), bad.mismatched.begin(), bad.mismatched.end());
  problems.insert(problems.end(), bad.extra.begin(), bad.extra.end());
  if (problems.empty()) return;
  std::string msg = "checkpoint " + checkpoint_dir + " does not match the model: " +
                    std::to_string(problems.size()) + " problem" +
                    (problems.size() == 1 ? "" : "s") + " (t5x's names, '/'-joined; shapes " +
                    "model vs checkpoint):";
  for (const std::string& p : problems) msg += "\n" + p;
  msg += "\nTo fix: rename keys with utils.RestoreCheckpointConfig.assignment_map = "
         "[(r'<model key regex>', r'<checkpoint key>' or None)]";
  if (bad.missing_target) {
    msg += "; set utils.RestoreCheckpointConfig.fallback_to_scratch = True to initialise "
           "parameters the checkpoint lacks";
  }
  if (bad.missing_state || !bad.extra.empty()) {
    msg += "; set utils.RestoreCheckpointConfig.strict = False to start optimizer slots the "
           "checkpoint lacks from scratch and ignore arrays the model does not have";
  }
  if (!bad.mismatched.empty()) msg += "; a shape difference means another model configuration";
  throw Error(msg);
}

// Reads the matched arrays into the live tensors, in parallel (each job one
// array), as TensorStore reads t5x's; notes parameters widened from bfloat16.
void ReadWants(checkpoints::CheckpointReader& reader, std::vector<Want>& wants,
               const RestoreOptions& options, RestoreReport& report) {
  std::atomic<int64_t> widened{0};
  ParallelFor(wants.size(), 0, [&](size_t i) {
    Want& w = wants[i];
    if (w.source.empty()) return;
    at::NoGradGuard no_grad_here;  // grad mode is per thread
    checkpoints::LoadedArray a = reader.Read(w.source, w.box);
    at::Tensor t = at::from_blob(a.bytes.data(), a.shape, at::TensorOptions(TorchDType(a.dtype)));
    if (!w.is_state && options.dtype && *options.dtype == "bfloat16") {
      t = t.to(at::kBFloat16);
    }
    if (t.scalar_type() != w.live.scalar_type() && !w.is_state &&
        t.scalar_type() == at::kBFloat16 && !options.dtype) {
      ++widened;
    }
    w.live.copy_(t);  // casts to the live dtype
  });
  if (widened) {
    report.notes.push_back(std::to_string(widened.load()) +
                           " parameters were saved as bfloat16 (SaveCheckpointConfig.dtype) and "
                           "are restored into float32");
  }
}

// A layer of a scanned array: where in the stacked want `want` the live
// per-layer tensor's values are.
struct LayerCopy {
  size_t want;
  at::Tensor live;
  checkpoints::ScannedPlace place;
};

// scan_layers: replaces the per-layer wants (dotted paths `paths`, slot
// parameter dims `dims`) by one want per scanned array, with its t5x key
// and a temporary tensor of its stacked shape; returns where each layer's
// values are in them.
std::vector<LayerCopy> StackWants(std::vector<Want>& wants, const std::vector<std::string>& paths,
                                  const std::vector<std::optional<std::vector<int64_t>>>& dims,
                                  const models::ParamStore& params,
                                  const checkpoints::ScanLayout& layout) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& p : params.params()) shapes[p.name] = p.value.sizes().vec();
  const checkpoints::ScannedStatePlan plan(shapes, layout);
  std::vector<Want> out;
  std::vector<LayerCopy> copies;
  std::map<std::string, size_t> index;  // stacked key -> its want in `out`
  for (size_t i = 0; i < wants.size(); ++i) {
    const std::optional<checkpoints::ScannedPlace> place =
        plan.PlaceOf(paths[i], wants[i].live.sizes().vec(), dims[i]);
    if (!place) {
      out.push_back(std::move(wants[i]));
      continue;
    }
    const std::string key = SlashKey(place->path);
    auto [it, fresh] = index.try_emplace(key, out.size());
    if (fresh) {
      out.push_back({key, at::zeros(place->shape, wants[i].live.options()), wants[i].is_state});
    }
    copies.push_back({it->second, wants[i].live, *place});
  }
  wants = std::move(out);
  return copies;
}

// After ReadWants: each layer's values from its read stacked want.
void UnstackWants(const std::vector<Want>& wants, const std::vector<LayerCopy>& copies) {
  for (const LayerCopy& c : copies) {
    const Want& w = wants[c.want];
    if (w.source.empty()) continue;  // not restored: keeps its fresh value
    const at::Tensor part = c.place.axis < 0 ? w.live : w.live.select(c.place.axis, c.place.layer);
    c.live.copy_(part.reshape(c.live.sizes()));
  }
}

}  // namespace

RestoreReport RestoreTrainState(const std::string& checkpoint_dir, models::ParamStore& params,
                                optim::Optimizer* optimizer, const RestoreOptions& options,
                                int process_index, int process_count) {
  checkpoints::CheckpointReader reader(checkpoint_dir);
  RestoreReport report;
  report.checkpoint_dir = checkpoint_dir;
  report.step = reader.step();

  std::map<std::string, std::string> ckpt_path_of;  // slash key -> dotted path
  for (const auto& [path, entry] : reader.arrays()) ckpt_path_of[SlashKey(path)] = path;

  std::vector<Want> wants;
  std::vector<std::string> paths;  // dotted, for options.scan
  std::vector<std::optional<std::vector<int64_t>>> slot_dims;
  for (auto& p : params.params()) {
    wants.push_back({"target/" + SlashKey(p.name), p.value, false});
    paths.push_back("target." + p.name);
    slot_dims.emplace_back();
  }
  if (optimizer) {
    for (const optim::StateArray& s : optimizer->StateArrays()) {
      wants.push_back({"state/" + SlashKey(s.path), s.value, true});
      paths.push_back("state." + s.path);
      slot_dims.push_back(s.param_dims);
    }
  }
  T5XX_CHECK(!options.scan || !options.owned_slice,
             "scan_layers = True restores on one process only (t5xx reads t5x's scanned layout "
             "whole); bind network.T5Config.scan_layers = False to train on a mesh of several "
             "processes");
  std::vector<LayerCopy> layer_copies;
  if (options.scan) layer_copies = StackWants(wants, paths, slot_dims, params, *options.scan);

  std::vector<Rule> rules = CompileRules(options);
  // t5x's flattened state includes state/step: a rule may address it.
  bool restore_step = true;
  if (optimizer) {
    std::smatch m;
    const Rule* r = FirstMatch(rules, kStepKey, m);
    if (r && !r->format) {
      restore_step = false;
      report.notes.push_back("state/step: not restored (assignment_map maps it to None); "
                             "training starts at step 0");
    }
  }
  Mismatches bad;
  std::set<std::string> used_ckpt;
  at::NoGradGuard no_grad;
  for (Want& w : wants) {
    MatchWant(w, reader, ckpt_path_of, rules, options, used_ckpt, report, bad);
  }
  std::vector<std::string> ignored;
  for (const auto& [key, path] : ckpt_path_of) {
    if (used_ckpt.count(key)) continue;
    const bool state = key.rfind("state/", 0) == 0;
    const std::string shape = checkpoints::ShapeString(reader.arrays().at(path).shape);
    if (!optimizer && state) continue;  // only the parameters were asked for
    if (options.strict) {
      bad.extra.push_back("  not in the model: " + key + " " + shape);
    } else {
      ignored.push_back(key + " " + shape);
    }
  }
  // Named one by one when few; else the first few and the count (e.g. the
  // optimizer slots of parameters a MultiOptimizer freezes).
  constexpr size_t kNamed = 4;
  for (size_t i = 0; i < ignored.size() && (ignored.size() <= kNamed + 1 || i < kNamed); ++i) {
    report.notes.push_back(ignored[i] + ": in the checkpoint but not in the model; ignored "
                           "(strict = False)");
  }
  if (ignored.size() > kNamed + 1) {
    report.notes.push_back("... and " + std::to_string(ignored.size() - kNamed) +
                           " more arrays in the checkpoint but not in the model; ignored "
                           "(strict = False)");
  }
  if (!optimizer) {
    report.notes.push_back("optimizer state: not restored (parameters only)");
  }
  if (!bad.missing.empty()) {  // the other layout of scalable_t5: say how to convert
    const bool per_layer_ckpt = ckpt_path_of.count("target/encoder/layers_0/relpos_bias/rel_embedding");
    const bool scanned_ckpt = ckpt_path_of.count("target/encoder/encoder/relpos_bias/rel_embedding");
    T5XX_CHECK(!(options.scan && per_layer_ckpt) && !(!options.scan && scanned_ckpt),
               "checkpoint " + checkpoint_dir + " holds scalable_t5's " +
                   (scanned_ckpt ? "scanned" : "per-layer") + " layout but the model has "
                   "network.T5Config.scan_layers = " + (options.scan ? "True" : "False") +
                   ": bind that to " + (options.scan ? "False" : "True") + ", or convert it with "
                   "`t5xx convert_checkpoint --checkpoint_path=" + checkpoint_dir +
                   " --output_dir=DIR --scan_layers=" + (options.scan ? "true" : "false") + "`");
  }
  ThrowIfMismatched(checkpoint_dir, rules, bad);
  if (!options.scan) {  // the parameters' wants come first, in the store's order
    report.unrestored_params.emplace();
    for (size_t i = 0; i < params.params().size(); ++i) {
      if (wants[i].source.empty()) report.unrestored_params->push_back(params.params()[i].name);
    }
  }
  // Only now, with every key and shape checked, are live tensors replaced,
  // so a refused restore leaves the fresh state untouched.
  ReadWants(reader, wants, options, report);
  UnstackWants(wants, layer_copies);
  if (optimizer) {
    std::map<std::string, at::Tensor> state;
    for (const optim::StateArray& s : optimizer->StateArrays()) state[s.path] = s.value;
    optimizer->RestoreState(state, restore_step ? report.step : 0);
  }
  report.dataset_state =
      reader.ReadExtraFile(checkpoints::DatasetStateFileName(process_index, process_count));
  report.bytes_read = static_cast<double>(reader.bytes_read());
  return report;
}

}  // namespace t5xx::trainer
