// See pytorch_state_dict.h. torch.save's zip holds <archive>/data.pkl (a
// pickle, protocol 2) and <archive>/data/<key> (each storage's raw bytes).
// libtorch's PyTorchStreamReader reads the zip; the pickle is read here by a
// small machine that knows only what a state dict needs -- strings, ints,
// tuples, dicts (OrderedDict), persistent storage ids,
// torch._utils._rebuild_tensor_v2 / _rebuild_parameter and libtorch's type
// tags -- and refuses any
// other global, so nothing in the file runs. (libtorch 1.13's own unpickler
// lacks pickle's SETITEM, which a dict of one tensor is written with.)
#include "t5xx/run/transformers/pytorch_state_dict.h"

#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <variant>

#include "t5xx/util/error.h"

namespace t5xx::run {
namespace {

struct PickleValue;
using PickleList = std::vector<PickleValue>;
struct PickleGlobal {
  std::string module, name;
};
struct PickleStorage {
  at::ScalarType dtype;
  std::string key;
  int64_t numel = 0;
};
struct PickleDict {
  std::vector<std::pair<PickleValue, PickleValue>> items;
};
struct PickleMark {};
struct PickleValue {
  std::variant<std::monostate, bool, int64_t, std::string, std::shared_ptr<PickleList>,
               PickleGlobal, PickleStorage, std::shared_ptr<PickleDict>, at::Tensor, PickleMark>
      v;
  // How deeply containers nest inside this value (0 for a leaf): bounded, so
  // that no recursion over a hostile file's values (their destruction
  // included) runs deep.
  int depth = 0;
};
constexpr int kMaxPickleDepth = 64;

// The storage classes torch.save names (torch.FloatStorage, ...).
at::ScalarType StorageDtype(const std::string& name, const std::string& where) {
  static const std::map<std::string, at::ScalarType> kTypes = {
      {"FloatStorage", at::kFloat},   {"HalfStorage", at::kHalf},  {"BFloat16Storage", at::kBFloat16},
      {"DoubleStorage", at::kDouble}, {"LongStorage", at::kLong},  {"IntStorage", at::kInt},
      {"ShortStorage", at::kShort},   {"CharStorage", at::kChar},  {"ByteStorage", at::kByte},
      {"BoolStorage", at::kBool}};
  auto it = kTypes.find(name);
  T5XX_CHECK(it != kTypes.end(), where + ": unknown storage type torch." + name);
  return it->second;
}

class StateDictUnpickler {
 public:
  StateDictUnpickler(const std::string& path, caffe2::serialize::PyTorchStreamReader& zip,
                     const char* data, size_t size)
      : path_(path), zip_(zip), p_(data), end_(data + size) {}

  PickleValue Run() {
    while (true) {
      const uint8_t op = Byte();
      switch (op) {
        case 0x80: Byte(); break;  // PROTO
        case '.': {
          T5XX_CHECK(stack_.size() == 1, Bad("the pickle ends with a stack of " +
                                             std::to_string(stack_.size())));
          return stack_.back();
        }
        case 'c': {
          PickleGlobal g;
          g.module = Line();
          g.name = Line();
          Push({g});
          break;
        }
        case '(': Push({PickleMark{}}); break;
        case ')': Push({std::make_shared<PickleList>()}); break;
        case ']': Push({std::make_shared<PickleList>()}); break;
        case '}': Push({std::make_shared<PickleDict>()}); break;
        case 'N': Push({}); break;
        case 0x88: Push({true}); break;
        case 0x89: Push({false}); break;
        case 'K': Push({static_cast<int64_t>(Byte())}); break;
        case 'M': Push({static_cast<int64_t>(Uint(2))}); break;
        case 'J': Push({static_cast<int64_t>(static_cast<int32_t>(Uint(4)))}); break;
        case 0x8a: Push({Long1()}); break;
        case 'X': Push({Bytes(Uint(4))}); break;
        case 0x8c: Push({Bytes(Byte())}); break;
        case 'U': Push({Bytes(Byte())}); break;
        case 'q': memo_[Byte()] = Top(); break;
        case 'r': memo_[Uint(4)] = Top(); break;
        case 'h': Push(Memo(Byte())); break;
        case 'j': Push(Memo(Uint(4))); break;
        case 't': Push(Container(PopToMark())); break;
        case 0x85: case 0x86: case 0x87: {
          PickleList items(op - 0x84);
          for (size_t i = items.size(); i-- > 0;) items[i] = Pop();
          Push(Container(std::move(items)));
          break;
        }
        case 'a': {
          PickleValue x = Pop();
          Deepen(Top(), x);
          AsList(Top()).push_back(std::move(x));
          break;
        }
        case 'e': {
          PickleList xs = PopToMark();
          for (auto& x : xs) {
            Deepen(Top(), x);
            AsList(Top()).push_back(x);
          }
          break;
        }
        case 's': {
          PickleValue v = Pop(), k = Pop();
          Deepen(Top(), v);
          Deepen(Top(), k);
          AsDict(Top()).items.emplace_back(k, v);
          break;
        }
        case 'u': {
          PickleList xs = PopToMark();
          T5XX_CHECK(xs.size() % 2 == 0, Bad("SETITEMS with an odd number of items"));
          for (size_t i = 0; i < xs.size(); i += 2) {
            Deepen(Top(), xs[i]);
            Deepen(Top(), xs[i + 1]);
            AsDict(Top()).items.emplace_back(xs[i], xs[i + 1]);
          }
          break;
        }
        case 'b': Pop(); break;  // BUILD: an OrderedDict's _metadata, not needed
        case 'Q': Push(PersistentStorage(Pop())); break;
        case 'R': {
          PickleValue args = Pop(), fn = Pop();
          Push(Reduce(fn, args));
          break;
        }
        default:
          throw Error(Bad("pickle opcode 0x" + Hex(op) + " is not one a state dict of tensors "
                          "uses (a whole pickled object, e.g. an nn.Module?)"));
      }
      T5XX_CHECK(stack_.size() < 100000 && memo_.size() < 10000000, Bad("the pickle is too large"));
    }
  }

 private:
  std::string Bad(const std::string& what) const {
    return path_ + ": not a torch.save state dict t5xx can read: " + what;
  }
  static std::string Hex(uint8_t b) {
    const char* d = "0123456789abcdef";
    return std::string{d[b >> 4], d[b & 15]};
  }
  uint8_t Byte() {
    T5XX_CHECK(p_ < end_, Bad("the pickle is truncated"));
    return static_cast<uint8_t>(*p_++);
  }
  uint64_t Uint(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(Byte()) << (8 * i);
    return v;
  }
  int64_t Long1() {
    const int n = Byte();
    T5XX_CHECK(n <= 8, Bad("an integer of " + std::to_string(n) + " bytes"));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(Byte()) << (8 * i);
    if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign
    return static_cast<int64_t>(v);
  }
  std::string Bytes(uint64_t n) {
    T5XX_CHECK(n <= static_cast<uint64_t>(end_ - p_), Bad("a string runs past the end"));
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  std::string Line() {
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', end_ - p_));
    T5XX_CHECK(nl != nullptr, Bad("a global's name runs past the end"));
    std::string s(p_, nl);
    p_ = nl + 1;
    return s;
  }
  void Push(PickleValue v) { stack_.push_back(std::move(v)); }
  // A tuple or list of `items`, one level deeper than the deepest of them.
  PickleValue Container(PickleList items) {
    int depth = 0;
    for (const auto& x : items) depth = std::max(depth, x.depth);
    T5XX_CHECK(depth < kMaxPickleDepth, Bad("containers nest more than " +
                                            std::to_string(kMaxPickleDepth) + " deep"));
    PickleValue v{std::make_shared<PickleList>(std::move(items))};
    v.depth = depth + 1;
    return v;
  }
  // Adds `x` to the container `c` (a list or dict), deepening it.
  void Deepen(PickleValue& c, const PickleValue& x) {
    T5XX_CHECK(x.depth + 1 < kMaxPickleDepth, Bad("containers nest more than " +
                                                  std::to_string(kMaxPickleDepth) + " deep"));
    c.depth = std::max(c.depth, x.depth + 1);
  }
  PickleValue Pop() {
    T5XX_CHECK(!stack_.empty(), Bad("the pickle pops an empty stack"));
    PickleValue v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  PickleValue& Top() {
    T5XX_CHECK(!stack_.empty(), Bad("the pickle reads an empty stack"));
    return stack_.back();
  }
  PickleValue Memo(uint64_t i) {
    auto it = memo_.find(i);
    T5XX_CHECK(it != memo_.end(), Bad("the pickle reads memo " + std::to_string(i) + " unset"));
    return it->second;
  }
  PickleList PopToMark() {
    PickleList out;
    while (true) {
      PickleValue v = Pop();
      if (std::holds_alternative<PickleMark>(v.v)) break;
      out.push_back(std::move(v));
    }
    return PickleList(out.rbegin(), out.rend());
  }
  PickleList& AsList(PickleValue& v) {
    auto* l = std::get_if<std::shared_ptr<PickleList>>(&v.v);
    T5XX_CHECK(l != nullptr, Bad("APPEND to something not a list"));
    return **l;
  }
  PickleDict& AsDict(PickleValue& v) {
    auto* d = std::get_if<std::shared_ptr<PickleDict>>(&v.v);
    T5XX_CHECK(d != nullptr, Bad("SETITEM on something not a dict"));
    return **d;
  }
  const PickleList& Tuple(const PickleValue& v, size_t at_least, const std::string& what) {
    auto* l = std::get_if<std::shared_ptr<PickleList>>(&v.v);
    T5XX_CHECK(l != nullptr && (*l)->size() >= at_least, Bad(what + " is not a tuple of " +
                                                             std::to_string(at_least)));
    return **l;
  }
  int64_t Int(const PickleValue& v, const std::string& what) {
    auto* i = std::get_if<int64_t>(&v.v);
    T5XX_CHECK(i != nullptr, Bad(what + " is not an integer"));
    return *i;
  }

  // ('storage', torch.<Type>Storage, key, location, numel): the bytes of
  // data/<key>.
  PickleValue PersistentStorage(const PickleValue& pid) {
    const PickleList& t = Tuple(pid, 5, "a persistent id");
    const auto* kind = std::get_if<std::string>(&t[0].v);
    const auto* type = std::get_if<PickleGlobal>(&t[1].v);
    const auto* key = std::get_if<std::string>(&t[2].v);
    T5XX_CHECK(kind && *kind == "storage" && type && type->module == "torch" && key,
               Bad("a persistent id that is not a storage"));
    return {PickleStorage{StorageDtype(type->name, path_), *key, Int(t[4], "a storage's size")}};
  }

  at::Tensor StorageTensor(const PickleStorage& s) {
    const std::string record = "data/" + s.key;
    T5XX_CHECK(zip_.hasRecord(record), Bad("storage " + record + " is missing from the zip"));
    auto [data, bytes] = zip_.getRecord(record);
    const size_t item = c10::elementSize(s.dtype);
    T5XX_CHECK(s.numel >= 0 && bytes == static_cast<size_t>(s.numel) * item,
               Bad(record + " holds " + std::to_string(bytes) + " bytes for " +
                   std::to_string(s.numel) + " elements"));
    at::Tensor t = at::empty({s.numel}, at::TensorOptions().dtype(s.dtype));
    if (bytes > 0) std::memcpy(t.data_ptr(), data.get(), bytes);
    return t;
  }

  PickleValue Reduce(const PickleValue& fn, const PickleValue& args) {
    const auto* g = std::get_if<PickleGlobal>(&fn.v);
    T5XX_CHECK(g != nullptr, Bad("REDUCE of something not a global"));
    const std::string name = g->module + "." + g->name;
    if (name == "collections.OrderedDict") return {std::make_shared<PickleDict>()};
    // libtorch's own writer (torch::pickle_save) tags typed containers.
    if (name == "torch.jit._pickle.restore_type_tag") return Tuple(args, 1, name + "'s arguments")[0];
    if (name == "torch._utils._rebuild_parameter") {
      const PickleList& a = Tuple(args, 1, name + "'s arguments");
      T5XX_CHECK(std::holds_alternative<at::Tensor>(a[0].v), Bad(name + " of a non-tensor"));
      return a[0];
    }
    T5XX_CHECK(name == "torch._utils._rebuild_tensor_v2",
               Bad("it calls " + name + ", which a state dict of tensors does not (t5xx reads "
                   "tensors and dicts only, and runs nothing from the file)"));
    const PickleList& a = Tuple(args, 4, name + "'s arguments");
    const auto* storage = std::get_if<PickleStorage>(&a[0].v);
    T5XX_CHECK(storage != nullptr, Bad(name + " of something not a storage"));
    const int64_t offset = Int(a[1], "a tensor's offset");
    std::vector<int64_t> size, stride;
    for (const auto& d : Tuple(a[2], 0, "a tensor's size")) size.push_back(Int(d, "a size"));
    for (const auto& d : Tuple(a[3], 0, "a tensor's stride")) stride.push_back(Int(d, "a stride"));
    T5XX_CHECK(offset >= 0, Bad("a tensor's storage offset is negative"));
    T5XX_CHECK(size.size() == stride.size(), Bad("a tensor's size and stride differ in rank"));
    int64_t last = offset;
    bool empty = false;
    for (size_t i = 0; i < size.size(); ++i) {
      T5XX_CHECK(size[i] >= 0 && stride[i] >= 0, Bad("a negative size or stride"));
      empty |= size[i] == 0;
      last += (size[i] - 1) * stride[i];
    }
    T5XX_CHECK(empty || last < storage->numel,
               Bad("a tensor reaches element " + std::to_string(last) + " of a storage of " +
                   std::to_string(storage->numel)));
    const at::Tensor base = StorageTensor(*storage);
    if (empty) return {at::empty(size, base.options())};
    return {base.as_strided(size, stride, offset).contiguous()};
  }

  std::string path_;
  caffe2::serialize::PyTorchStreamReader& zip_;
  const char* p_;
  const char* end_;
  std::vector<PickleValue> stack_;
  std::map<uint64_t, PickleValue> memo_;
};

}  // namespace

std::map<std::string, at::Tensor> ReadPytorchStateDict(const std::string& path) {
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> zip;
  try {
    zip = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw Error(path + ": not a zip-format torch.save file (" + why.substr(0, why.find('\n')) +
                "); PyTorch >= 1.6 writes one: save the model again with save_pretrained, or "
                "as safetensors");
  }
  T5XX_CHECK(zip->hasRecord("data.pkl"), path + ": a zip without data.pkl, not a torch.save file");
  if (zip->hasRecord("byteorder")) {
    auto [order, n] = zip->getRecord("byteorder");
    const std::string text(static_cast<const char*>(order.get()), n);
    T5XX_CHECK(text == "little", path + ": its storages are " + text +
                                     "-endian (the byteorder record); t5xx reads little-endian "
                                     "ones");
  }
  auto [pkl, size] = zip->getRecord("data.pkl");
  StateDictUnpickler unpickler(path, *zip, static_cast<const char*>(pkl.get()), size);
  const PickleValue root = unpickler.Run();
  const auto* dict = std::get_if<std::shared_ptr<PickleDict>>(&root.v);
  T5XX_CHECK(dict != nullptr, path + ": holds something other than a state dict (a dict of tensors)");
  std::map<std::string, at::Tensor> out;
  for (const auto& [k, v] : (*dict)->items) {
    const auto* name = std::get_if<std::string>(&k.v);
    T5XX_CHECK(name != nullptr, path + ": a state dict key is not a string");
    const auto* t = std::get_if<at::Tensor>(&v.v);
    T5XX_CHECK(t != nullptr, path + ": '" + *name + "' is not a tensor (a nested dict? t5xx "
                                                    "reads a flat state dict)");
    T5XX_CHECK(out.emplace(*name, *t).second, path + ": '" + *name + "' is given twice");
  }
  return out;
}

}  // namespace t5xx::run
