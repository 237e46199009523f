// English–German phrase pairs from FreeDict's eng-deu dictd database; see
// freedict_pairs.h.
#include "t5xx/demo/freedict_pairs.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "t5xx/demo/corpus_text.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/utf8.h"

namespace t5xx::seqio {
namespace {

std::string MissingHint() {
  return std::string(" (install the Debian package ") + kFreedictPackage +
         ": apt-get install " + kFreedictPackage + ")";
}

// dictd's base64 digit value, or -1.
int Base64Digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool DecodeBase64Number(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 10) return false;  // 10 digits: 60 bits
  uint64_t n = 0;
  for (char c : s) {
    const int d = Base64Digit(c);
    if (d < 0) return false;
    n = n * 64 + static_cast<uint64_t>(d);
  }
  *out = n;
  return true;
}

std::string CollapseSpaces(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool IsOpen(char c) { return c == '<' || c == '[' || c == '(' || c == '{'; }
bool IsClose(char c) { return c == '>' || c == ']' || c == ')' || c == '}'; }

// Labels of regional variants and of old or rare usage: a translation that
// carries one is not standard present-day German.
const std::set<std::string>& DroppedLabels() {
  static const std::set<std::string> labels = {
      // Austria, Switzerland, Liechtenstein, Luxembourg, South Tyrol and
      // German regions.
      "Ös.", "Westös.", "Ostös.", "Südostös.", "Schw.", "Ostschw.", "Lie.", "Lux.",
      "Südtirol", "Tirol", "Vorarlberg", "Kärnten", "Wien", "Bayr.", "Norddt.", "Süddt.",
      "Mitteldt.", "Westdt.", "Ostdt.", "Nordostdt.", "Nordwestdt.", "Südwestdt.",
      "Mittelwestdt.", "Mittelostdt.", "Ostmitteldt.", "BW", "NRW", "Sachsen", "Berlin",
      "Franken", "Baden", "Württemberg", "Pfalz", "Westfalen",
      // Old or rare usage.
      "veraltet", "veraltend", "alt", "altertümlich", "frühere Bezeichnung", "selten",
      "obs.", "archaic", "dated", "becoming dated", "former name", "rare"};
  return labels;
}

// Splits at commas outside bracket groups.
std::vector<std::string> SplitTopLevel(const std::string& line) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : line) {
    if (IsOpen(c)) ++depth;
    if (IsClose(c)) depth = std::max(0, depth - 1);
    if (c == ',' && depth == 0) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// Whether a raw piece is only a pronunciation ("  /ˈabf/ ").
bool IsPronunciation(const std::string& piece) {
  const std::string t = Trim(piece);
  return t.size() >= 2 && t.front() == '/' && t.back() == '/' &&
         t.find('/', 1) == t.size() - 1;
}

// A raw piece without the abbreviation at its end that the next piece's
// pronunciation belongs to ("Rhodium <neut> [chem.] Rh" -> "Rhodium <neut>
// [chem.]"): the text after its last bracket group, or, with no group, its
// last word ("" when it is one word: the abbreviation alone).
std::string DropTrailingAbbreviation(const std::string& piece) {
  const size_t close = piece.find_last_of(">])}");
  if (close != std::string::npos) return piece.substr(0, close + 1);
  const std::string t = Trim(piece);
  const size_t space = t.rfind(' ');
  return space == std::string::npos ? std::string() : t.substr(0, space);
}

// One translation cleaned as FreedictGermanTranslations says, or "" when it
// is dropped.
std::string CleanTranslation(const std::string& piece) {
  std::string text;
  text.reserve(piece.size());
  int depth = 0;
  std::string label;  // the [..] group being read at depth 1
  bool in_square = false;
  for (size_t i = 0; i < piece.size(); ++i) {
    const char c = piece[i];
    if (IsOpen(c)) {
      if (depth == 0) {
        in_square = c == '[';
        label.clear();
      } else if (in_square) {
        label += c;
      }
      ++depth;
      continue;
    }
    if (IsClose(c) && depth > 0) {
      --depth;
      if (depth == 0) {
        if (in_square && DroppedLabels().count(Trim(label))) return "";
        text += ' ';
        // An abbreviation glued to a grammar group ("<fem>Abf.") ends the
        // translation.
        if (c == '>' && i + 1 < piece.size() && piece[i + 1] != ' ' && !IsOpen(piece[i + 1])) {
          break;
        }
      } else if (in_square) {
        label += c;
      }
      continue;
    }
    if (depth > 0) {
      if (in_square) label += c;
      continue;
    }
    text += c;
  }
  return CollapseSpaces(Trim(text));
}

}  // namespace

std::string DictdIndexPath(const std::string& dict_path) {
  for (const char* suffix : {".dict.dz", ".dict.gz", ".dict"}) {
    if (EndsWith(dict_path, suffix)) {
      return dict_path.substr(0, dict_path.size() - std::string(suffix).size()) + ".index";
    }
  }
  throw Error("'" + dict_path +
              "' is not a dictd database name (expected <name>.dict, <name>.dict.dz or "
              "<name>.dict.gz beside <name>.index)");
}

std::vector<DictdIndexEntry> ReadDictdIndex(const std::string& index_path) {
  if (!FileExists(index_path)) {
    throw Error("dictd index not found: '" + index_path + "'" + MissingHint());
  }
  std::vector<DictdIndexEntry> out;
  LineReader reader(index_path);
  std::string line;
  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const size_t t1 = line.find('\t');
    const size_t t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    DictdIndexEntry e;
    const bool ok = t2 != std::string::npos && line.find('\t', t2 + 1) == std::string::npos &&
                    DecodeBase64Number(line.substr(t1 + 1, t2 - t1 - 1), &e.offset) &&
                    DecodeBase64Number(line.substr(t2 + 1), &e.length);
    if (!ok) {
      throw Error(index_path + ":" + std::to_string(reader.line_number()) +
                  ": not a dictd index line (expected headword<TAB>offset<TAB>length, "
                  "numbers in base64 A-Za-z0-9+/): '" + line + "'");
    }
    e.headword = line.substr(0, t1);
    out.push_back(std::move(e));
  }
  return out;
}

std::string FreedictEnglish(const std::string& headword_line) {
  const size_t pron = headword_line.find(" /");
  return CollapseSpaces(Trim(headword_line.substr(0, pron)));
}

std::vector<std::string> FreedictGermanTranslations(const std::string& translation_line) {
  std::vector<std::string> out;
  const std::vector<std::string> pieces = SplitTopLevel(translation_line);
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (IsPronunciation(pieces[i])) continue;
    const bool abbreviated = i + 1 < pieces.size() && IsPronunciation(pieces[i + 1]);
    std::string t = CleanTranslation(abbreviated ? DropTrailingAbbreviation(pieces[i]) : pieces[i]);
    if (!t.empty()) out.push_back(std::move(t));
  }
  return out;
}

std::vector<TranslationPair> ReadFreedictPairs(const std::string& dict_path) {
  if (!FileExists(dict_path)) {
    throw Error("dictd database not found: '" + dict_path + "'" + MissingHint());
  }
  const std::string index_path = DictdIndexPath(dict_path);
  const std::vector<DictdIndexEntry> index = ReadDictdIndex(index_path);
  const std::string db = ReadFileToString(dict_path);

  // Distinct ranges in database order; a range is a header entry when every
  // headword naming it is one of dictfmt's 00-database-* names (the index
  // spells them without punctuation unless dictfmt ran with --allchars).
  std::map<std::pair<uint64_t, uint64_t>, bool> ranges;  // -> is header
  for (size_t i = 0; i < index.size(); ++i) {
    const DictdIndexEntry& e = index[i];
    if (e.offset > db.size() || e.length > db.size() - e.offset) {
      throw Error(index_path + ":" + std::to_string(i + 1) + ": entry '" + e.headword +
                  "' spans bytes [" + std::to_string(e.offset) + ", " +
                  std::to_string(e.offset + e.length) + ") but '" + dict_path + "' has " +
                  std::to_string(db.size()) +
                  " bytes; the index does not belong to this database (reinstall " +
                  kFreedictPackage + ")");
    }
    const bool header = e.headword.rfind("00-database-", 0) == 0 ||
                        e.headword.rfind("00database", 0) == 0;
    auto [it, inserted] = ranges.emplace(std::make_pair(e.offset, e.length), header);
    if (!inserted) it->second = it->second && header;
  }

  std::vector<TranslationPair> out;
  std::unordered_set<std::string> seen;  // english + '\n' + german
  for (const auto& [range, header] : ranges) {
    if (header) continue;
    const std::string entry = db.substr(range.first, range.second);
    const size_t eol = entry.find('\n');
    if (eol == std::string::npos) continue;  // a headword without translations
    const size_t eol2 = entry.find('\n', eol + 1);
    const std::string english = ToValidUtf8(FreedictEnglish(entry.substr(0, eol)));
    if (english.empty()) continue;
    const std::string line2 = entry.substr(
        eol + 1, (eol2 == std::string::npos ? entry.size() : eol2) - eol - 1);
    for (const std::string& de : FreedictGermanTranslations(line2)) {
      TranslationPair p{english, ToValidUtf8(de)};
      if (seen.insert(p.english + '\n' + p.german).second) out.push_back(std::move(p));
    }
  }
  return out;
}

bool IsPlainPhrase(const std::string& text) {
  bool letter = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      letter = true;
    } else if ((c >= '0' && c <= '9') || c == ' ' || c == '-' || c == '\'' || c == '.') {
    } else if (c == 0xC3 && i + 1 < text.size()) {
      // U+00C0..U+00FF are C3 80..C3 BF; × is C3 97, ÷ is C3 B7.
      const unsigned char d = static_cast<unsigned char>(text[i + 1]);
      if (d < 0x80 || d > 0xBF || d == 0x97 || d == 0xB7) return false;
      letter = true;
      ++i;
    } else {
      return false;
    }
  }
  return letter;
}

namespace {
// The code points of `s` lowercased (ASCII; Latin-1 U+00C0..U+00DE but
// U+00D7); other bytes of multi-byte sequences as they are, one unit each.
std::vector<uint32_t> LowerCodePoints(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? c + 32u : c);
    } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size()) {
      uint32_t cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
      if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) cp += 0x20;
      out.push_back(cp);
      ++i;
    } else if ((c & 0xC0) != 0x80) {
      out.push_back(0x110000u + c);  // the lead byte of a longer sequence
    }
  }
  return out;
}
}  // namespace

double SpellingSimilarity(const std::string& a, const std::string& b) {
  const std::vector<uint32_t> x = LowerCodePoints(a), y = LowerCodePoints(b);
  const size_t longer = std::max(x.size(), y.size());
  if (longer == 0) return 1.0;
  std::vector<size_t> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= x.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= y.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (x[i - 1] != y[j - 1])});
      diagonal = up;
    }
  }
  return 1.0 - static_cast<double>(row[y.size()]) / static_cast<double>(longer);
}

std::vector<TranslationPair> SelectFreedictPairs(const std::vector<TranslationPair>& pairs,
                                                 const FreedictSelection& selection) {
  T5XX_CHECK(selection.max_words >= 1 && selection.max_characters >= 1,
             "SelectFreedictPairs: max_words and max_characters must be >= 1, got " +
                 std::to_string(selection.max_words) + " and " +
                 std::to_string(selection.max_characters));
  T5XX_CHECK(selection.min_spelling_similarity >= 0 && selection.min_spelling_similarity <= 1,
             "SelectFreedictPairs: min_spelling_similarity must be in [0, 1], got " +
                 std::to_string(selection.min_spelling_similarity));
  // English phrase -> its German texts (distinct), to find ambiguous ones.
  std::unordered_map<std::string, std::unordered_set<std::string>> translations;
  for (const TranslationPair& p : pairs) translations[p.english].insert(p.german);
  auto fits = [&](const std::string& s) {
    if (!IsPlainPhrase(s) || CountCodePoints(s) > selection.max_characters) return false;
    if (s.front() == ' ' || s.back() == ' ' || s.find("  ") != std::string::npos) return false;
    const int64_t words = std::count(s.begin(), s.end(), ' ') + 1;
    return words <= selection.max_words;
  };
  std::vector<TranslationPair> out;
  std::unordered_set<std::string> kept;
  for (const TranslationPair& p : pairs) {
    if (translations.at(p.english).size() != 1) continue;
    if (!fits(p.english) || !fits(p.german)) continue;
    if (selection.min_spelling_similarity > 0 &&
        SpellingSimilarity(p.english, p.german) < selection.min_spelling_similarity) {
      continue;
    }
    if (kept.insert(p.english).second) out.push_back(p);
  }
  return out;
}

}  // namespace t5xx::seqio
