// PyTorch's pytorch_model.bin (torch.save of a state dict, zip format): the
// zip through libtorch's PyTorchStreamReader, the pickle through a reader of
// state dicts that rebuilds tensors and dicts only and runs no code from the
// file.
#pragma once

#include <map>
#include <string>

#include <ATen/ATen.h>

namespace t5xx::run {

// name -> tensor (contiguous, on the CPU). Throws t5xx::Error naming the
// file when it is not a zip-format torch.save of a dict of tensors (the
// legacy pre-1.6 format, another object, a truncated file) or holds a
// non-tensor value.
std::map<std::string, at::Tensor> ReadPytorchStateDict(const std::string& path);

}  // namespace t5xx::run
