// pytorch_state_dict.h: files libtorch's own writer makes (torch::pickle_save
// writes torch.save's zip format), read back exactly; damaged ones refused
// with the file named. Python's torch.save (including the one-tensor dicts
// libtorch 1.13's unpickler cannot read) is covered by
// tests/interop/transformers_test.py.
#include "t5xx/run/transformers/pytorch_state_dict.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>

#include <gtest/gtest.h>

#include "test_util.h"

namespace t5xx::run {
namespace {

std::string Save(const std::string& path, const c10::IValue& v) {
  const std::vector<char> bytes = torch::jit::pickle_save(v);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(PytorchStateDictTest, ReadsWhatLibtorchWrites) {
  t5xx::testing::TempDir dir;
  c10::impl::GenericDict d(c10::StringType::get(), c10::TensorType::get());
  const at::Tensor a = at::arange(6, at::kFloat).reshape({2, 3});
  const at::Tensor h = at::arange(4, at::kFloat).to(at::kHalf);
  d.insert("a", a);
  d.insert("half", h);
  const auto sd = ReadPytorchStateDict(Save(dir.path + "/two.bin", d));
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_TRUE(at::equal(sd.at("a"), a));
  EXPECT_EQ(sd.at("half").scalar_type(), at::kHalf);
  EXPECT_TRUE(at::equal(sd.at("half"), h));
  c10::impl::GenericDict one(c10::StringType::get(), c10::TensorType::get());
  one.insert("only", a.t());  // a transposed view: stored strided
  EXPECT_TRUE(at::equal(ReadPytorchStateDict(Save(dir.path + "/one.bin", one)).at("only"), a.t()));
}

TEST(PytorchStateDictTest, DamagedFilesAreNamed) {
  t5xx::testing::TempDir dir;
  c10::impl::GenericDict d(c10::StringType::get(), c10::TensorType::get());
  d.insert("a", at::arange(6, at::kFloat));
  std::vector<char> bytes = torch::jit::pickle_save(d);
  const std::string path = dir.path + "/x.bin";
  std::ofstream(path, std::ios::binary).write(bytes.data(), 100);
  EXPECT_ERROR_CONTAINS(ReadPytorchStateDict(path), "x.bin: not a zip-format torch.save file");
  Save(path, c10::IValue(at::ones({2})));
  EXPECT_ERROR_CONTAINS(ReadPytorchStateDict(path), "x.bin: holds something other than a state dict");
  c10::impl::GenericDict ints(c10::StringType::get(), c10::IntType::get());
  ints.insert("n", 3);
  Save(path, ints);
  EXPECT_ERROR_CONTAINS(ReadPytorchStateDict(path), "x.bin: 'n' is not a tensor");
}

}  // namespace
}  // namespace t5xx::run
