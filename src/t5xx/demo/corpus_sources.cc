// The demo corpus's text sources: fortune and dictd files read into
// documents, and the source list expanded to files.
#include "t5xx/demo/corpus_sources.h"

#include <sys/stat.h>

#include <climits>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "t5xx/demo/corpus_text.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/utf8.h"

namespace t5xx::seqio {
namespace {

// ------------------------------------------------------------------- text

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

std::vector<std::string> DefaultCorpusSources() {
  return {"/usr/share/games/fortunes/*", "/usr/share/dictd/gcide.dict.dz"};
}

// ----------------------------------------------------------- source list

bool IsDictdPath(const std::string& p) {
  return EndsWith(p, ".dict") || EndsWith(p, ".dict.dz") ||
         EndsWith(p, ".dict.gz");
}

namespace {

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

}  // namespace

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

}  // namespace t5xx::seqio
