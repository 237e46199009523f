// See pytorch_state_dict.h.
#include "t5xx/run/transformers/pytorch_state_dict.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/util/error.h"

namespace t5xx::run {

std::map<std::string, at::Tensor> ReadPytorchStateDict(const std::string& path) {
  const std::vector<uint8_t> bytes = checkpoints::ReadFile(path, "the PyTorch weights");
  T5XX_CHECK(bytes.size() >= 4 && bytes[0] == 'P' && bytes[1] == 'K',
             path + ": not a zip-format torch.save file (PyTorch >= 1.6 writes one; save the "
             "model again with save_pretrained, or as safetensors)");
  c10::IValue v;
  try {
    v = torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const std::exception& e) {
    // libtorch appends its stack frames: the first line is the reason.
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));
    if (why.size() > 300) why = why.substr(0, 300) + "...";
    throw Error(path + ": cannot read it as a torch.save state dict (" + why +
                "); libtorch 1.13's reader also refuses a dict of one tensor, as the last shard "
                "of a sharded save may be: save the model with safe_serialization=True "
                "(Transformers' default) and import model.safetensors");
  }
  T5XX_CHECK(v.isGenericDict(), path + ": holds a " + v.tagKind() +
                                    ", not a state dict (a dict of tensors)");
  std::map<std::string, at::Tensor> out;
  for (const auto& kv : v.toGenericDict()) {
    T5XX_CHECK(kv.key().isString(), path + ": a state dict key is not a string");
    const std::string name = kv.key().toStringRef();
    T5XX_CHECK(kv.value().isTensor(),
               path + ": '" + name + "' is a " + kv.value().tagKind() + ", not a tensor");
    out[name] = kv.value().toTensor().contiguous();
  }
  return out;
}

}  // namespace t5xx::run
