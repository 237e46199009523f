// English–German phrase pairs from FreeDict's eng-deu dictd database
// (Debian package dict-freedict-eng-deu: freedict-eng-deu.dict.dz, a dictzip
// file, and freedict-eng-deu.index), and the rule that picks the pairs of
// the demo translation task.
//
// The database (FreeDict's conversion of TU Chemnitz's Ding dictionary,
// written by dictfmt) holds one entry per English headword sense:
//   line 1  English headword, its IPA pronunciation between slashes, then
//           optional annotations:  "set sth. on fire /sˈɛt .../ <v>"
//   line 2  the German translations, comma-separated, each with optional
//           grammar in <..> (<masc>, <pl>, <v, trans>), usage or domain
//           labels in [..] ([ugs.], [Ös.], [med.]) and optional words in
//           (..) or [..]:  "etw. in Brand setzen, etw. anzünden [ugs.]";
//           it starts with a space when it starts with a label
//   further indented lines: examples ('      "..."  - ...'), notes
//           ("Note: ..."), "Synonyms: {..}" and " see: {..}"; ignored.
// Entries are not reliably separated by blank lines, so they are found the
// way dictd finds them: by the (offset, length) ranges of the .index file
// (base64 numbers, dictd's alphabet A-Za-z0-9+/), skipping dictfmt's
// 00-database-* header entries. Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::seqio {

// The Debian package and database the demo translation task is built from.
inline constexpr char kFreedictPackage[] = "dict-freedict-eng-deu";
inline constexpr char kDefaultFreedictDictionary[] =
    "/usr/share/dictd/freedict-eng-deu.dict.dz";

struct TranslationPair {
  std::string english;
  std::string german;
  bool operator==(const TranslationPair& o) const {
    return english == o.english && german == o.german;
  }
};

// One dictd index line: headword, then the entry's byte range in the
// decompressed database.
struct DictdIndexEntry {
  std::string headword;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// The .index file of a dictd database: "<name>.dict", "<name>.dict.dz" or
// "<name>.dict.gz" -> "<name>.index". Throws t5xx::Error for any other name.
std::string DictdIndexPath(const std::string& dict_path);

// Reads a dictd .index: "headword<TAB>offset<TAB>length" lines, numbers in
// dictd's base64. Throws t5xx::Error naming the file and line for a line
// without three tab-separated fields or a number with a character outside
// the alphabet (or over 10 digits), and naming the file when it cannot be
// opened.
std::vector<DictdIndexEntry> ReadDictdIndex(const std::string& index_path);

// The English phrase of a headword line: the text before the pronunciation
// (the first " /"), spaces collapsed; the whole line when it has none.
std::string FreedictEnglish(const std::string& headword_line);

// The German translations of a translation line, in order: the line split at
// commas outside <..>, [..], (..) and {..}; a translation carrying a label
// of a regional variant ([Ös.], [Schw.], [Bayr.], [Norddt.], ...) or of old
// or rare usage ([veraltet], [selten], [obs.], ...) is dropped, so a phrase
// keeps its standard-German translations; from the rest every <..>, [..],
// (..) and {..} group is removed (grammar, labels, optional words: "(sich)
// ärgern" -> "ärgern"); an abbreviation given with its pronunciation is
// dropped with it: glued to a grammar group ("Abfahrt <fem>Abf.,  /ˈabf/"
// -> "Abfahrt") or after the last group ("Rhodium <neut> [chem.] Rh,
// /ˌɑːɹˈeɪtʃ/" -> "Rhodium"; with no group, the last word); spaces are
// collapsed and empty results dropped.
std::vector<std::string> FreedictGermanTranslations(const std::string& translation_line);

// Every (English, German) pair of the database at `dict_path` (plain,
// gzip or dictzip; its index is DictdIndexPath(dict_path)): one pair per
// translation FreedictGermanTranslations keeps, for each entry in database
// order (entries are the index's distinct ranges, those named only by
// 00-database-* / 00database* headwords skipped). Duplicates (the same pair
// from several entries) are kept once, at their first place. Texts are
// valid UTF-8 (ToValidUtf8). Throws t5xx::Error naming the file (and the
// package kFreedictPackage when the database or its index is missing), or
// naming the index line whose range lies outside the database.
std::vector<TranslationPair> ReadFreedictPairs(const std::string& dict_path);

// Which pairs the demo task keeps.
struct FreedictSelection {
  // Words (space-separated) per side, in [1, max_words].
  int max_words = 3;
  // Unicode code points per side, at most this many.
  int max_characters = 30;
  // SpellingSimilarity(english, german) at least this (0: any pair). 0.5
  // keeps cognates, loanwords and compounds of them ("data migration" ->
  // "Datenmigration", "semantic" -> "semantisch"): about a fifth of the
  // pairs, those whose German a tiny model can learn to spell from the
  // English in a few hundred steps; the rest are word pairs to memorise
  // (measured in configs/examples/t5_1_1_tiny_finetune_en_de.gin).
  double min_spelling_similarity = 0.5;
};

// 1 - Levenshtein distance / length of the longer, over the code points of
// both texts lowercased (ASCII and Latin-1 letters): 1 for "Piranhas" and
// "piranhas", 0.8 for "semantic" and "semantisch", 0 for texts that share
// nothing in place; 1 for two empty texts.
double SpellingSimilarity(const std::string& a, const std::string& b);

// True when `text` is made of letters (ASCII and Latin-1, U+00C0–U+00FF but
// × and ÷), digits, spaces, '-', '\'' and '.', and holds a letter. Rejects
// what a cleaned dictionary string should not carry: '/', ',', '…', '!',
// brackets, symbols.
bool IsPlainPhrase(const std::string& text);

// The pairs of the demo task, in input order: an English phrase is kept only
// when all its pairs in `pairs` have the same German text (it is
// unambiguous: with several translations the reference for one input would
// be arbitrary and the target a coin toss the model cannot learn), and that
// pair passes IsPlainPhrase and the bounds of `selection` on both sides and
// min_spelling_similarity. Throws t5xx::Error when max_words or
// max_characters < 1 or min_spelling_similarity is outside [0, 1].
std::vector<TranslationPair> SelectFreedictPairs(const std::vector<TranslationPair>& pairs,
                                                 const FreedictSelection& selection);

}  // namespace t5xx::seqio
