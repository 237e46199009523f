// Loading the libt5xx_sentencepiece module and calling SentencePiece through it
// (see sentencepiece_module.h).
#include "t5xx/data/vocabularies/sentencepiece_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "t5xx/data/vocabularies/sentencepiece_shim/shim_api.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_kind.h"

namespace t5xx::seqio::spm {
namespace {

// The shim's functions (shim_api.h): t5xx_spm_<name> bound to Api::<name>.
#define T5XX_SPM_FUNCTIONS(X)                                                                  \
  X(abi_version) X(free_buffer) X(load) X(load_serialized) X(free) X(score) X(piece_size) \
  X(special_id) X(id_to_piece) X(encode) X(decode) X(train)

struct Api {
#define T5XX_SPM_MEMBER(name) decltype(&t5xx_spm_##name) name;
  T5XX_SPM_FUNCTIONS(T5XX_SPM_MEMBER)
#undef T5XX_SPM_MEMBER
};

std::vector<std::string> CandidatePaths() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("T5XX_SENTENCEPIECE_MODULE"); env && *env) {
    paths.push_back(env);
  }
#ifdef T5XX_SENTENCEPIECE_MODULE_PATH
  paths.push_back(T5XX_SENTENCEPIECE_MODULE_PATH);
#endif
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    paths.push_back(
        (std::filesystem::path(exe).parent_path().parent_path() / "lib" /
         "libt5xx_sentencepiece.so").string());
  }
  return paths;
}

// Sanitizer runtimes refuse dlopen(RTLD_DEEPBIND). Under them the module
// (built without sanitizers, see sentencepiece_shim/CMakeLists.txt) is loaded
// into a link-map namespace of its own instead, which isolates its protobuf
// as DEEPBIND does in normal builds.
#if defined(T5XX_SANITIZED_BUILD)
constexpr bool kIsolateWithNamespace = true;
#else
constexpr bool kIsolateWithNamespace = false;
#endif

void* OpenModule(const std::string& path) {
  if (kIsolateWithNamespace) {
    return ::dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  return ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
}

template <typename F>
void Bind(void* handle, const char* name, F* fn, const std::string& path) {
  *fn = reinterpret_cast<F>(::dlsym(handle, name));
  if (!*fn) {
    throw Error(path + " lacks symbol " + name +
                "; rebuild t5xx so the module matches the binary");
  }
}

const Api& GetApi() {
  static std::once_flag once;
  static Api api;
  static std::string failure;
  std::call_once(once, [] {
    std::string tried;
    for (const auto& path : CandidatePaths()) {
      if (!std::filesystem::exists(path)) {
        tried += (tried.empty() ? "" : ", ") + path;
        continue;
      }
      void* h = OpenModule(path);
      if (!h) {
        failure = std::string("cannot load the SentencePiece module ") + path + ": " +
                  ::dlerror() + " (is libsentencepiece0 installed? run scripts/setup.sh)";
        return;
      }
      try {
#define T5XX_SPM_BIND(name) Bind(h, "t5xx_spm_" #name, &api.name, path);
        T5XX_SPM_FUNCTIONS(T5XX_SPM_BIND)
#undef T5XX_SPM_BIND
      } catch (const Error& e) {
        failure = e.what();
        return;
      }
      if (api.abi_version() != T5XX_SPM_SHIM_ABI_VERSION) {
        failure = path + " has ABI version " + std::to_string(api.abi_version()) +
                  ", expected " + std::to_string(T5XX_SPM_SHIM_ABI_VERSION) +
                  "; rebuild t5xx";
      }
      return;
    }
    failure = "the SentencePiece module libt5xx_sentencepiece.so was not found (tried " +
              tried + "); build t5xx (it is built next to the binaries) or set "
              "T5XX_SENTENCEPIECE_MODULE to its path";
  });
  if (!failure.empty()) throw Error(failure);
  return api;
}

[[noreturn]] void ThrowWith(const Api& api, char* error, const std::string& prefix) {
  std::string message = prefix + (error ? error : "unknown SentencePiece error");
  if (error) api.free_buffer(error);
  throw Error(message);
}

}  // namespace

Model::Model(const std::string& model_file) : model_file_(model_file) {
  const Api& api = GetApi();
  if (const std::string why = NotARegularFile(model_file); !why.empty()) {
    throw Error(model_file + ": SentencePiece model file " +
                (why == "does not exist" ? std::string("not found") : why));
  }
  char* error = nullptr;
  if (api.load(model_file.c_str(), &model_, &error) != 0) {
    ThrowWith(api, error, model_file + ": not a SentencePiece model: ");
  }
}

std::unique_ptr<Model> Model::FromSerialized(const std::string& bytes,
                                             const std::string& what) {
  const Api& api = GetApi();
  std::unique_ptr<Model> m(new Model());
  m->model_file_ = what;
  char* error = nullptr;
  if (api.load_serialized(bytes.data(), bytes.size(), &m->model_, &error) != 0) {
    ThrowWith(api, error, what + ": not a SentencePiece model: ");
  }
  return m;
}

Model::~Model() {
  if (model_) GetApi().free(model_);
}

int Model::piece_size() const { return GetApi().piece_size(model_); }
int Model::pad_id() const { return GetApi().special_id(model_, 0); }
int Model::eos_id() const { return GetApi().special_id(model_, 1); }
int Model::unk_id() const { return GetApi().special_id(model_, 2); }
int Model::bos_id() const { return GetApi().special_id(model_, 3); }

float Model::Score(int id) const { return GetApi().score(model_, id); }

std::string Model::IdToPiece(int id) const {
  const Api& api = GetApi();
  char* piece = nullptr;
  size_t len = 0;
  if (api.id_to_piece(model_, id, &piece, &len) != 0) throw Error("out of memory");
  std::string out(piece, len);
  api.free_buffer(piece);
  return out;
}

std::vector<int32_t> Model::Encode(const std::string& text) const {
  const Api& api = GetApi();
  int32_t* ids = nullptr;
  size_t n = 0;
  char* error = nullptr;
  if (api.encode(model_, text.data(), text.size(), &ids, &n, &error) != 0) {
    ThrowWith(api, error, model_file_ + ": encode failed: ");
  }
  std::vector<int32_t> out(ids, ids + n);
  api.free_buffer(ids);
  return out;
}

std::string Model::Decode(const std::vector<int32_t>& ids) const {
  const Api& api = GetApi();
  char* text = nullptr;
  size_t len = 0;
  char* error = nullptr;
  if (api.decode(model_, ids.data(), ids.size(), &text, &len, &error) != 0) {
    ThrowWith(api, error, model_file_ + ": decode failed: ");
  }
  std::string out(text, len);
  api.free_buffer(text);
  return out;
}

std::string Train(const std::vector<std::pair<std::string, std::string>>& args,
           const std::vector<std::string>& sentences, unsigned int seed,
           bool quiet) {
  const Api& api = GetApi();
  std::vector<const char*> flat;
  for (const auto& [k, v] : args) {
    flat.push_back(k.c_str());
    flat.push_back(v.c_str());
  }
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(sentences.size());
  lens.reserve(sentences.size());
  for (const auto& s : sentences) {
    ptrs.push_back(s.data());
    lens.push_back(s.size());
  }
  char* error = nullptr;
  char* model = nullptr;
  size_t model_len = 0;
  if (api.train(flat.data(), args.size(), ptrs.data(), lens.data(), sentences.size(),
                seed, quiet ? 1 : 0, &model, &model_len, &error) != 0) {
    ThrowWith(api, error, "");
  }
  std::string out(model, model_len);
  api.free_buffer(model);
  return out;
}

}  // namespace t5xx::seqio::spm
