// Corpus builder: Debian fortunes + GCIDE -> C4-format JSON lines + SPM model.
//
// Measured with the default options on the real Debian sources (fortunes
// 1:1.99.1, 43 plain fortune files; dict-gcide 0.48, gcide.dict.dz 13.5 MB
// compressed / 40 MB text), 2 shared cores, Release build:
//   documents     15,217 fortunes + 126,358 dictionary entries = 141,575
//   train         138,696 documents, 30,740,481 characters, 4 shards
//                 (13.3 MB gzip in total)
//   validation    2,879 documents, 643,160 characters (0.29 MB gzip)
//   model         8000 pieces, 370 KB; 200,000 of 299,173 train lines
//                 sampled for SentencePiece
//   time          57 s wall (90 s CPU): ~4 s reading/cleaning/writing, the
//                 rest SentencePiece training; peak RSS 620 MB.
//                 With all 299k lines (spm_input_sentence_size=300000):
//                 146 s CPU, 195 s wall on a loaded machine — hence 200k.
//   re-run        0.02 s (corpus_info.json found, nothing rebuilt)
// Two builds with the same options give byte-identical shards and model.
#include "t5xx/data/corpus_builder.h"

#include <sys/stat.h>

#include <climits>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "t5xx/data/file_utils.h"
#include "t5xx/data/sentencepiece_module.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/utf8.h"


namespace t5xx::seqio {
namespace {

using nlohmann::json;

// ------------------------------------------------------------------ hashing

uint64_t Mix64(uint64_t z) {  // splitmix64 finaliser
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t Fnv1a64(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

uint64_t UrlHash(const std::string& url, uint64_t seed) {
  return Mix64(Fnv1a64(url) ^ Mix64(seed));
}

// ------------------------------------------------------------------- text

int64_t CountCodePoints(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string RTrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\n'))
    s.pop_back();
  return s;
}

std::string Trim(const std::string& s) {
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  return RTrim(s.substr(b));
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Basename(const std::string& p) {
  const size_t k = p.rfind('/');
  return k == std::string::npos ? p : p.substr(k + 1);
}

// Applies terminal overstriking ("X\bX" bold, "_\bX" underline -> "X") and
// drops other control characters except tab.
std::string CleanFortuneLine(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (unsigned char c : line) {
    if (c == '\b') {
      // Delete the previous UTF-8 character.
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
        out.pop_back();
      if (!out.empty()) out.pop_back();
      continue;
    }
    if ((c < 0x20 && c != '\t') || c == 0x7F) continue;
    out += static_cast<char>(c);
  }
  return RTrim(out);
}

std::string JoinDocumentLines(std::vector<std::string>& lines) {
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  size_t first = 0;
  while (first < lines.size() && lines[first].empty()) ++first;
  std::string text;
  for (size_t i = first; i < lines.size(); ++i) {
    if (i > first) text += '\n';
    text += lines[i];
  }
  return text;
}

// --------------------------------------------------------------- GCIDE markup

bool IsSourceTag(const std::string& content) {
  return content.find("Webster") != std::string::npos ||
         content.find("WordNet") != std::string::npos ||
         content.find("PJC") != std::string::npos ||
         content.find("Century Dict") != std::string::npos ||
         content == "AS" || content == "RDH";
}

bool IsDiacriticMark(char c) {
  return c == '^' || c == '\'' || c == '=' || c == '.' || c == '~' ||
         c == '`' || c == '"' || c == '-' || c == ',' || c == '*';
}

bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Maps a GCIDE character code (the text inside [..]) to plain text, or
// returns false when `content` is not a character code.
bool MapCharCode(const std::string& content, std::string* out) {
  static const std::unordered_map<std::string, std::string> kNamed = {
      {"ae", "ae"},   {"AE", "AE"},   {"oe", "oe"},    {"OE", "OE"},
      {"aum", "a"},   {"eum", "e"},   {"ium", "i"},    {"oum", "o"},
      {"uum", "u"},   {"imac", "i"},  {"eth", "th"},   {"thorn", "th"},
      {"th", "th"},   {"ng", "ng"},   {"root", "root"}, {"add", "+"},
      {"deg", "\xC2\xB0"},            {"sect", "\xC2\xA7"},
      {"pounds", "\xC2\xA3"},         {"times", "\xC3\x97"},
      {"yogh", "gh"}, {"udd", "u"},   {"asl", "'"},    {"break", ""},
      {"alpha", "alpha"}, {"beta", "beta"}, {"gamma", "gamma"},
      {"theta", "theta"}, {"iota", "iota"}, {"kappa", "kappa"},
      {"pi", "pi"},   {"rho", "rho"}, {"tau", "tau"},  {"phi", "phi"},
      {"prime", "'"}, {"bprime", "\""}, {"min", "'"},  {"sec", "\""},
      {"flat", "b"},  {"sharp", "#"}, {"bar", "|"},    {"dsdot", ":"},
  };
  auto it = kNamed.find(content);
  if (it != kNamed.end()) {
    *out = it->second;
    return true;
  }
  // Accent codes: one mark before one or two letters ("'e", "=oo", ".a",
  // "~n") or a breve after them ("i^", "oo^") -> the letters. Letters followed
  // by '.' are abbreviations ("[L.]", "[Sp.]") and are kept.
  auto all_letters = [](const std::string& x) {
    if (x.empty() || x.size() > 2) return false;
    for (char c : x)
      if (!IsAsciiLetter(c)) return false;
    return true;
  };
  if (content.size() >= 2 && IsDiacriticMark(content[0]) &&
      all_letters(content.substr(1))) {
    *out = content.substr(1);
    return true;
  }
  if (content.size() >= 2 && content.back() == '^' &&
      all_letters(content.substr(0, content.size() - 1))) {
    *out = content.substr(0, content.size() - 1);
    return true;
  }
  return false;
}

}  // namespace

std::string CleanDictdParagraph(const std::string& paragraph) {
  // 1. Pronunciations: text between paired backslashes.
  std::string s;
  s.reserve(paragraph.size());
  for (size_t i = 0; i < paragraph.size(); ++i) {
    if (paragraph[i] == '\\') {
      const size_t close = paragraph.find('\\', i + 1);
      if (close == std::string::npos) continue;  // stray: drop the backslash
      i = close;
      continue;
    }
    s += paragraph[i];
  }
  // 2. Bracketed codes and source tags; 3. braces.
  // Inside {..} (derived forms, e.g. {Ef*fect"less*ly}) the syllable and
  // stress marks * " ` between letters are dropped.
  std::string t;
  t.reserve(s.size());
  int brace_depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '{') {
      ++brace_depth;
      continue;
    }
    if (c == '}') {
      brace_depth = std::max(0, brace_depth - 1);
      continue;
    }
    if (brace_depth > 0 && (c == '*' || c == '"' || c == '`') && !t.empty() &&
        IsAsciiLetter(t.back()) && i + 1 < s.size() &&
        (IsAsciiLetter(s[i + 1]) || s[i + 1] == '[')) {
      continue;
    }
    if (c == '[') {
      const size_t close = s.find(']', i + 1);
      if (close != std::string::npos && close - i <= 48) {
        const std::string content = s.substr(i + 1, close - i - 1);
        if (content.find('[') == std::string::npos) {
          std::string mapped;
          if (IsSourceTag(content)) {
            i = close;
            continue;
          }
          if (MapCharCode(content, &mapped)) {
            t += mapped;
            i = close;
            continue;
          }
        }
      }
    }
    t += c;
  }
  // 4. Collapse whitespace; no space before , ; : . ) left by removals.
  std::string u;
  u.reserve(t.size());
  for (char c : t) {
    if (c == ' ' || c == '\t') {
      if (!u.empty() && u.back() != ' ') u += ' ';
      continue;
    }
    if ((c == ',' || c == ';' || c == ':' || c == '.' || c == ')') &&
        !u.empty() && u.back() == ' ') {
      u.pop_back();
    }
    u += c;
  }
  u = Trim(u);
  // A paragraph reduced to punctuation (e.g. "," between two removed
  // pronunciations) carries no text.
  bool has_alnum = false;
  for (unsigned char c : u) {
    if (std::isalnum(c) || c >= 0x80) {
      has_alnum = true;
      break;
    }
  }
  return has_alnum ? u : std::string();
}

namespace {

// A dictd entry starts with a headword line: at column 0, not starting with a
// backslash (continued pronunciation), holding " \" (the pronunciation).
bool IsDictdEntryStart(const std::string& line) {
  if (line.empty()) return false;
  const char c = line[0];
  if (c == ' ' || c == '\t' || c == '\\') return false;
  if (line.compare(0, 12, "00-database-") == 0) return false;
  return line.find(" \\") != std::string::npos;
}

std::string DictdEntryText(const std::vector<std::string>& lines) {
  std::vector<std::string> paragraphs;
  std::string cur;
  auto flush = [&]() {
    if (!cur.empty()) {
      std::string p = CleanDictdParagraph(cur);
      if (!p.empty()) paragraphs.push_back(std::move(p));
    }
    cur.clear();
  };
  for (const auto& raw : lines) {
    const std::string line = Trim(raw);
    if (line.empty()) {
      flush();
      continue;
    }
    if (!cur.empty()) cur += ' ';
    cur += line;
  }
  flush();
  std::string text;
  for (const auto& p : paragraphs) {
    if (!text.empty()) text += '\n';
    text += p;
  }
  return text;
}

}  // namespace

namespace {
// Appends text as the next document of `path` (url "file://<path>#<k>").
void AppendDocument(const std::string& path, const std::string& text,
                    std::vector<CorpusDocument>& docs) {
  docs.push_back({"file://" + path + "#" + std::to_string(docs.size()),
                  ToValidUtf8(text)});
}
}  // namespace

std::vector<CorpusDocument> ReadFortuneFile(const std::string& path,
                                            size_t max_documents) {
  std::vector<CorpusDocument> docs;
  LineReader reader(path);
  std::vector<std::string> lines;
  auto flush = [&]() {
    std::string text = JoinDocumentLines(lines);
    lines.clear();
    if (text.empty()) return;
    AppendDocument(path, text, docs);
  };
  std::string line;
  while (reader.Next(&line)) {
    if (RTrim(line) == "%") {
      flush();
      if (max_documents && docs.size() >= max_documents) return docs;
      continue;
    }
    lines.push_back(CleanFortuneLine(line));
  }
  flush();
  if (max_documents && docs.size() > max_documents) docs.resize(max_documents);
  return docs;
}

std::vector<CorpusDocument> ReadDictdFile(const std::string& path,
                                          size_t max_documents) {
  std::vector<CorpusDocument> docs;
  LineReader reader(path);
  std::vector<std::string> entry;
  bool in_entry = false;  // false while in the dictd header
  auto flush = [&]() {
    if (!in_entry) return;
    std::string text = DictdEntryText(entry);
    entry.clear();
    if (text.empty()) return;
    AppendDocument(path, text, docs);
  };
  std::string line;
  while (reader.Next(&line)) {
    if (IsDictdEntryStart(line)) {
      flush();
      if (max_documents && docs.size() >= max_documents) return docs;
      in_entry = true;
      entry.clear();
    }
    if (in_entry) entry.push_back(line);
  }
  flush();
  if (max_documents && docs.size() > max_documents) docs.resize(max_documents);
  return docs;
}

bool IsValidationDocument(const std::string& url, uint64_t seed,
                          double validation_fraction) {
  const double u =
      static_cast<double>(UrlHash(url, seed) >> 11) * (1.0 / 9007199254740992.0);
  return u < validation_fraction;
}

std::vector<std::string> DefaultCorpusSources() {
  return {"/usr/share/games/fortunes/*", "/usr/share/dictd/gcide.dict.dz"};
}

std::string DefaultDataDir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  if (!env("T5XX_DATA_DIR").empty()) return env("T5XX_DATA_DIR");
  if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/t5xx";
  if (!env("HOME").empty()) return env("HOME") + "/.cache/t5xx";
  throw Error("cannot choose a data directory: set T5XX_DATA_DIR (or "
              "XDG_CACHE_HOME or HOME)");
}

std::string CorpusInfo::TrainFilePattern() const {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%05zu", train.files.size());
  return output_dir + "/c4-train.json-*-of-" + buf + ".gz";
}

std::string CorpusInfo::ValidationFilePattern() const {
  return output_dir + "/c4-validation.json-*-of-00001.gz";
}

namespace {

constexpr char kInfoFile[] = "corpus_info.json";

bool IsDictdPath(const std::string& p) {
  return EndsWith(p, ".dict") || EndsWith(p, ".dict.dz") ||
         EndsWith(p, ".dict.gz");
}

std::string PackageHint(const std::string& p) {
  if (IsDictdPath(p) || p.find("/dictd") != std::string::npos) {
    return p.find("gcide") != std::string::npos
               ? " (install the Debian package dict-gcide: apt-get install "
                 "dict-gcide)"
               : " (dictd databases come from Debian dict-* packages, e.g. "
                 "dict-gcide)";
  }
  if (p.find("fortunes") != std::string::npos) {
    return " (install the Debian package fortunes: apt-get install "
           "fortunes)";
  }
  return "";
}

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

bool IsRegularFileFollowingLinks(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool HasWildcard(const std::string& p) {
  return p.find_first_of("*?[") != std::string::npos;
}

std::vector<std::string> ExpandSources(const std::vector<std::string>& srcs) {
  std::vector<std::string> out;
  for (const auto& s : srcs) {
    if (!HasWildcard(s)) {
      if (!FileExists(s)) {
        throw Error("corpus source file not found: '" + s + "'" +
                    PackageHint(s));
      }
      out.push_back(s);
      continue;
    }
    // Symlinks count only when their target is not matched too (Debian's
    // fortunes has *.u8 -> * links); directories and devices are skipped.
    std::vector<std::string> kept;
    std::set<std::string> targets;
    const std::vector<std::string> matches = Glob(s);
    for (const auto& p : matches) {
      if (IsRegularFile(p)) targets.insert(RealPath(p));
    }
    for (const auto& p : matches) {
      const std::string base = Basename(p);
      if (base.empty() || base[0] == '.') continue;
      if (EndsWith(base, ".dat") || EndsWith(base, ".u8")) continue;
      if (IsRegularFile(p)) {
        kept.push_back(p);
      } else if (IsSymlink(p) && IsRegularFileFollowingLinks(p) &&
                 targets.insert(RealPath(p)).second) {
        kept.push_back(p);
      }
    }
    if (kept.empty()) {
      throw Error("corpus source pattern '" + s + "' matches no file" +
                  PackageHint(s));
    }
    out.insert(out.end(), kept.begin(), kept.end());
  }
  return out;
}

json OptionsJson(const CorpusOptions& o) {
  return json{{"validation_fraction", o.validation_fraction},
              {"num_train_shards", o.num_train_shards},
              {"seed", o.seed},
              {"vocab_size", o.vocab_size},
              {"max_documents", o.max_documents},
              {"sources", o.sources},
              {"spm_input_sentence_size", o.spm_input_sentence_size},
              {"spm_num_threads", o.spm_num_threads}};
}

std::string ShardName(const std::string& split, int i, int n) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "c4-%s.json-%05d-of-%05d.gz", split.c_str(),
                i, n);
  return buf;
}

json SplitJson(const CorpusSplitInfo& s) {
  std::vector<std::string> names;
  for (const auto& f : s.files) names.push_back(Basename(f));
  return json{{"documents", s.documents},
              {"characters", s.characters},
              {"files", names}};
}

CorpusSplitInfo SplitFromJson(const json& j, const std::string& dir) {
  CorpusSplitInfo s;
  s.documents = j.at("documents").get<int64_t>();
  s.characters = j.at("characters").get<int64_t>();
  for (const auto& f : j.at("files")) s.files.push_back(dir + "/" + f.get<std::string>());
  return s;
}

// Sentences for SentencePiece: the non-empty lines of the train documents,
// lines over kMaxSentenceBytes cut at spaces (SentencePiece skips longer
// sentences instead of using them).
constexpr size_t kMaxSentenceBytes = 4000;

void AppendSentences(const std::string& text, std::vector<std::string>* out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (line.size() > kMaxSentenceBytes) {
      size_t cut = line.rfind(' ', kMaxSentenceBytes);
      if (cut == std::string::npos || cut == 0) {
        cut = kMaxSentenceBytes;
        while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80)
          --cut;  // do not split a UTF-8 sequence
      }
      out->push_back(line.substr(0, cut));
      line = Trim(line.substr(cut));
    }
    if (!Trim(line).empty()) out->push_back(std::move(line));
    start = end + 1;
  }
}


// Keeps at most `cap` sentences: those with the smallest hash(seed, index),
// in their original order. Deterministic and platform-independent.
void SampleSentences(std::vector<std::string>* sentences, size_t cap,
                     uint64_t seed) {
  if (cap == 0 || sentences->size() <= cap) return;
  std::vector<std::pair<uint64_t, size_t>> keys(sentences->size());
  const uint64_t s = Mix64(seed ^ 0x5350u);
  for (size_t i = 0; i < sentences->size(); ++i) {
    keys[i] = {Mix64(s + i), i};
  }
  std::nth_element(keys.begin(), keys.begin() + cap, keys.end());
  keys.resize(cap);
  std::vector<size_t> idx;
  idx.reserve(cap);
  for (const auto& k : keys) idx.push_back(k.second);
  std::sort(idx.begin(), idx.end());
  std::vector<std::string> kept;
  kept.reserve(cap);
  for (size_t i : idx) kept.push_back(std::move((*sentences)[i]));
  sentences->swap(kept);
}

// Trains the unigram model in memory and writes <model_path> and the
// matching .vocab ("piece<TAB>score" lines) atomically. Training returns the
// serialized model (no model_prefix), so the model bytes do not depend on
// the output directory or process id.
// Returns the number of pieces.
int32_t TrainSentencePiece(const CorpusOptions& o,
                           const std::vector<std::string>& sentences,
                           const std::string& model_path) {
  const std::vector<std::pair<std::string, std::string>> args = {
      {"model_type", "unigram"},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"hard_vocab_limit", "false"},
      {"pad_id", "0"},
      {"eos_id", "1"},
      {"unk_id", "2"},
      {"bos_id", "-1"},
      {"pad_piece", "<pad>"},
      {"eos_piece", "</s>"},
      {"unk_piece", "<unk>"},
      {"byte_fallback", "true"},
      {"character_coverage", "0.9999"},
      {"input_sentence_size", "0"},  // already sampled by SampleSentences
      {"shuffle_input_sentence", "false"},
      {"max_sentence_length", std::to_string(kMaxSentenceBytes + 96)},
      {"num_threads", std::to_string(std::max(1, o.spm_num_threads))},
  };
  std::string serialized;
  try {
    serialized = spm::Train(
        args, sentences,
        static_cast<unsigned int>((o.seed ^ (o.seed >> 32)) & 0xFFFFFFFFu),
        /*quiet=*/true);
  } catch (const Error& e) {
    const std::string msg = e.what();
    throw Error("SentencePiece training for '" + model_path + "' failed: " +
                msg +
                (msg.find("ocabulary size") != std::string::npos
                     ? " (vocab_size must cover 3 special + 256 byte pieces + "
                       "the distinct characters of the corpus, and not "
                       "exceed what the corpus can fill)"
                     : ""));
  }
  std::unique_ptr<spm::Model> sp = spm::Model::FromSerialized(serialized, model_path);
  std::ostringstream vocab;
  for (int i = 0; i < sp->piece_size(); ++i) {
    vocab << sp->IdToPiece(i) << '\t' << sp->Score(i) << '\n';
  }
  WriteStringToFileAtomic(
      model_path.substr(0, model_path.size() - 6) + ".vocab", vocab.str());
  WriteStringToFileAtomic(model_path, serialized);
  return sp->piece_size();
}

void RemoveOldShards(const std::string& dir) {
  for (const auto& split : {"train", "validation"}) {
    for (const auto& f :
         Glob(dir + "/c4-" + split + ".json-[0-9][0-9][0-9][0-9][0-9]-of-"
                                     "[0-9][0-9][0-9][0-9][0-9].gz")) {
      std::remove(f.c_str());
    }
  }
}

CorpusInfo InfoFromJson(const json& j, const std::string& dir) {
  CorpusInfo info;
  info.output_dir = dir;
  info.train = SplitFromJson(j.at("splits").at("train"), dir);
  info.validation = SplitFromJson(j.at("splits").at("validation"), dir);
  for (const auto& s : j.at("sources")) {
    info.sources.push_back({s.at("path").get<std::string>(),
                            s.at("kind").get<std::string>(),
                            s.at("documents").get<int64_t>()});
  }
  info.vocab_model_file =
      dir + "/" + j.at("sentencepiece_model").get<std::string>();
  info.base_vocab_size = j.at("base_vocab_size").get<int32_t>();
  info.spm_training_sentences = j.at("spm_training_sentences").get<int64_t>();
  info.build_seconds = j.at("build_seconds").get<double>();
  return info;
}

}  // namespace

CorpusInfo ReadCorpusInfo(const std::string& output_dir) {
  const std::string path = output_dir + "/" + kInfoFile;
  if (!FileExists(path)) {
    throw Error("corpus not built: '" + path +
                "' is missing (run BuildCorpus / `t5xx build-corpus`)");
  }
  try {
    const json j = json::parse(ReadFileToString(path));
    if (j.at("format_version").get<int>() != CorpusInfo::kFormatVersion) {
      throw Error("'" + path + "' has format_version " +
                  DumpJson(j.at("format_version")) + ", expected " +
                  std::to_string(CorpusInfo::kFormatVersion) +
                  "; rebuild the corpus");
    }
    return InfoFromJson(j, output_dir);
  } catch (const json::exception& e) {
    throw Error("malformed corpus info '" + path + "': " + e.what() +
                "; delete it and rebuild the corpus");
  }
}

namespace {
// True when the model loads and every shard exists and decompresses to the
// end (a truncated or damaged shard makes a rebuild).
bool CorpusIsIntact(const CorpusInfo& info) {
  if (!FileExists(info.vocab_model_file)) return false;
  spm::Model model(info.vocab_model_file);  // throws Error when damaged
  std::vector<std::string> files = info.train.files;
  files.insert(files.end(), info.validation.files.begin(), info.validation.files.end());
  for (const auto& f : files) {
    if (!FileExists(f)) return false;
    LineReader reader(f);
    std::string line;
    while (reader.Next(&line)) {
    }
  }
  return true;
}
}  // namespace

CorpusInfo BuildCorpus(const CorpusOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  T5XX_CHECK(!o.output_dir.empty(), "BuildCorpus: output_dir is empty");
  T5XX_CHECK(o.validation_fraction >= 0 && o.validation_fraction < 1,
        "BuildCorpus: validation_fraction must be in [0, 1), got " +
            std::to_string(o.validation_fraction));
  T5XX_CHECK(o.num_train_shards >= 1 && o.num_train_shards <= 99999,
        "BuildCorpus: num_train_shards must be in [1, 99999], got " +
            std::to_string(o.num_train_shards));
  T5XX_CHECK(o.vocab_size >= 260,
        "BuildCorpus: vocab_size must be >= 260 (3 special + 256 byte "
        "pieces + at least one), got " + std::to_string(o.vocab_size));
  T5XX_CHECK(!o.sources.empty(), "BuildCorpus: no sources given");

  const std::string dir = o.output_dir;
  const std::string info_path = dir + "/" + kInfoFile;
  const json options_json = OptionsJson(o);

  // Idempotency: a complete, intact corpus built with the same options is
  // reused; one built with other options is replaced only with `overwrite`.
  if (FileExists(info_path)) {
    json j;
    try {
      j = json::parse(ReadFileToString(info_path));
    } catch (const json::exception&) {
      j = json();  // unreadable marker: the corpus is incomplete, rebuild
    }
    if (j.is_object() && j.value("format_version", 0) == CorpusInfo::kFormatVersion &&
        j.contains("options")) {
      if (j.at("options") != options_json) {
        if (!o.overwrite) {
          std::string differ;
          for (const auto& [k, v] : options_json.items()) {
            if (!j.at("options").contains(k) || j.at("options").at(k) != v) {
              differ += (differ.empty() ? "" : ", ") + k + ": " +
                        (j.at("options").contains(k) ? DumpJson(j.at("options").at(k)) : "unset") +
                        " -> " + DumpJson(v);
            }
          }
          throw Error(dir + " already holds a complete corpus built with other options (" +
                      differ + "); pass --overwrite to replace it, or choose another --data_dir");
        }
      } else {
        try {
          CorpusInfo info = InfoFromJson(j, dir);
          if (CorpusIsIntact(info)) {
            info.reused = true;
            return info;
          }
        } catch (const json::exception&) {
        } catch (const Error&) {
        }
        // Missing or damaged files: rebuild below.
      }
    }
  }

  // Validate sources before touching the output directory.
  const std::vector<std::string> files = ExpandSources(o.sources);

  MakeDirs(dir);
  std::remove(info_path.c_str());  // no longer complete while rebuilding
  RemoveOldShards(dir);

  CorpusInfo info;
  info.output_dir = dir;
  std::vector<std::unique_ptr<GzipWriter>> train_writers;
  for (int i = 0; i < o.num_train_shards; ++i) {
    const std::string name = dir + "/" + ShardName("train", i, o.num_train_shards);
    info.train.files.push_back(name);
    train_writers.push_back(std::make_unique<GzipWriter>(name));
  }
  const std::string val_name = dir + "/" + ShardName("validation", 0, 1);
  info.validation.files.push_back(val_name);
  GzipWriter val_writer(val_name);

  std::vector<std::string> sentences;
  size_t total_docs = 0;
  for (const auto& path : files) {
    if (o.max_documents && total_docs >= o.max_documents) break;
    const size_t budget = o.max_documents ? o.max_documents - total_docs : 0;
    const bool dictd = IsDictdPath(path);
    std::vector<CorpusDocument> docs =
        dictd ? ReadDictdFile(path, budget) : ReadFortuneFile(path, budget);
    info.sources.push_back(
        {path, dictd ? "dictd" : "fortune", static_cast<int64_t>(docs.size())});
    total_docs += docs.size();
    for (auto& d : docs) {
      const json line = {{"text", d.text}, {"url", d.url},
                         {"timestamp", kCorpusTimestamp}};
      const std::string serialized = DumpJson(line);
      const int64_t chars = CountCodePoints(d.text);
      if (IsValidationDocument(d.url, o.seed, o.validation_fraction)) {
        val_writer.WriteLine(serialized);
        info.validation.documents += 1;
        info.validation.characters += chars;
      } else {
        const uint64_t h = Mix64(UrlHash(d.url, o.seed) ^ 0x7368617264ULL);
        train_writers[h % static_cast<uint64_t>(o.num_train_shards)]->WriteLine(
            serialized);
        info.train.documents += 1;
        info.train.characters += chars;
        AppendSentences(d.text, &sentences);
      }
    }
  }
  if (info.train.documents == 0) {
    throw Error("BuildCorpus: the sources yielded no training documents (" +
                std::to_string(total_docs) + " documents in total); check "
                "options.sources and validation_fraction");
  }
  for (auto& w : train_writers) w->Close();
  val_writer.Close();

  SampleSentences(&sentences, o.spm_input_sentence_size, o.seed);
  info.spm_training_sentences = static_cast<int64_t>(sentences.size());
  info.vocab_model_file = dir + "/sentencepiece.model";
  info.base_vocab_size =
      TrainSentencePiece(o, sentences, info.vocab_model_file);
  info.build_seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - t0)
                           .count();

  json sources = json::array();
  for (const auto& s : info.sources) {
    sources.push_back(
        {{"path", s.path}, {"kind", s.kind}, {"documents", s.documents}});
  }
  const json info_json = {
      {"format_version", CorpusInfo::kFormatVersion},
      {"format", "c4 json lines (gzip): text, url, timestamp"},
      {"options", options_json},
      {"sources", sources},
      {"splits",
       {{"train", SplitJson(info.train)},
        {"validation", SplitJson(info.validation)}}},
      {"sentencepiece_model", "sentencepiece.model"},
      {"base_vocab_size", info.base_vocab_size},
      {"spm_training_sentences", info.spm_training_sentences},
      {"timestamp", kCorpusTimestamp},
      {"build_seconds", info.build_seconds},
  };
  WriteStringToFileAtomic(info_path, DumpJson(info_json, 2) + "\n");
  return info;
}

}  // namespace t5xx::seqio
