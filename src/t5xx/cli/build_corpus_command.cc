// `t5xx build_corpus`: builds the demo corpus (C4 format) and its
// SentencePiece model under --data_dir (demo/corpus_builder.h), then the
// English->German translation data from FreeDict when its dictionary is
// installed (demo/freedict_builder.h).
#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "t5xx/cli/commands.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/demo/demo_tasks.h"
#include "t5xx/demo/freedict_builder.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::cli {
namespace {

// Parses a decimal integer in [minimum, maximum] for --flag.
int64_t ParseCount(const std::string& flag, const std::string& v, int64_t minimum,
                   int64_t maximum) {
  errno = 0;
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  T5XX_CHECK(!v.empty() && *end == '\0' && errno == 0 && n >= minimum && n <= maximum,
        "t5xx build_corpus: --" + flag + " must be an integer in [" + std::to_string(minimum) +
            ", " + std::to_string(maximum) + "], got '" + v + "'");
  return n;
}

}  // namespace

int BuildCorpusCommand(const std::vector<std::string>& args) {
  auto flags = ParseFlags(
      args, {"data_dir", "vocab_size", "max_documents", "overwrite", "freedict"}, "build_corpus");
  const std::string data_dir =
      flags.count("data_dir") ? flags["data_dir"] : seqio::DefaultDataDir();
  seqio::CorpusOptions options;
  options.output_dir = seqio::DemoCorpusDir(data_dir);
  if (flags.count("vocab_size")) {
    options.vocab_size =
        static_cast<int>(ParseCount("vocab_size", flags["vocab_size"], 260, 1000000));
  }
  if (flags.count("max_documents")) {
    options.max_documents = static_cast<size_t>(
        ParseCount("max_documents", flags["max_documents"], 0, int64_t{1} << 40));
  }
  if (flags.count("overwrite")) {
    const std::string& v = flags["overwrite"];
    T5XX_CHECK(v == "true" || v == "false",
          "t5xx build_corpus: --overwrite must be true or false, got '" + v + "'");
    options.overwrite = v == "true";
  }
  bool freedict = true;
  if (flags.count("freedict")) {
    const std::string& v = flags["freedict"];
    T5XX_CHECK(v == "true" || v == "false",
          "t5xx build_corpus: --freedict must be true or false, got '" + v + "'");
    freedict = v == "true";
  }
  std::cout << "[build_corpus] building " << options.output_dir << " ..." << std::endl;
  seqio::CorpusInfo info = seqio::BuildCorpus(options);
  std::cout << "[build_corpus] " << (info.reused ? "already complete" : "built") << ": "
            << info.train.documents << " train / " << info.validation.documents
            << " validation documents, " << info.train.characters + info.validation.characters
            << " characters, SentencePiece vocabulary of " << info.base_vocab_size
            << " pieces at " << info.vocab_model_file;
  if (!info.reused) std::cout << " (" << info.build_seconds << " s)";
  std::cout << std::endl;
  if (!freedict) return 0;
  seqio::FreedictOptions fo;
  fo.output_dir = seqio::FreedictDataDir(data_dir);
  fo.overwrite = options.overwrite;
  if (!seqio::FileExists(fo.dictionary)) {
    // The C4 part stands; only the translation task lacks its data.
    std::cout << "[build_corpus] note: " << fo.dictionary << " not found, so the data of "
              << seqio::kFreedictTaskName << " is not built; install the Debian package "
              << seqio::kFreedictPackage << " (apt-get install " << seqio::kFreedictPackage
              << ") and run build_corpus again" << std::endl;
    return 0;
  }
  std::cout << "[build_corpus] building " << fo.output_dir << " ..." << std::endl;
  const seqio::FreedictInfo fi = seqio::BuildFreedictData(fo);
  std::cout << "[build_corpus] " << (fi.reused ? "already complete" : "built") << ": "
            << fi.train_examples << " train / " << fi.validation_examples
            << " validation English->German pairs (of " << fi.dictionary_pairs
            << " in the dictionary) for " << seqio::kFreedictTaskName;
  if (!fi.reused) std::cout << " (" << fi.build_seconds << " s)";
  std::cout << std::endl;
  return 0;
}

}  // namespace t5xx::cli
