// A small demo corpus for the demo-task tests: `t5xx build_corpus`'s
// BuildCorpus (corpus_builder.h) over a fortunes file written from the given
// texts, with a 300-piece SentencePiece model, 10% validation and one
// trainer thread.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "t5xx/demo/corpus_builder.h"
#include "t5xx/demo/demo_tasks.h"

namespace t5xx::demo_testing {

// Writes `texts` as fortunes (each followed by a "%" line) to
// <work_dir>/fortunes and builds DemoCorpusDir(data_dir) from it. Throws
// t5xx::Error as BuildCorpus does.
inline void BuildSmallCorpus(const std::string& work_dir, const std::string& data_dir,
                             const std::vector<std::string>& texts) {
  const std::string fortunes = work_dir + "/fortunes";
  {
    std::ofstream f(fortunes);
    for (const std::string& t : texts) f << t << "\n%\n";
  }
  seqio::CorpusOptions o;
  o.output_dir = seqio::DemoCorpusDir(data_dir);
  o.sources = {fortunes};
  o.vocab_size = 300;
  o.validation_fraction = 0.1;
  o.spm_num_threads = 1;
  seqio::BuildCorpus(o);
}

}  // namespace t5xx::demo_testing
