// The demo corpus's text sources: Debian fortune files and dictd (GCIDE)
// databases read into documents, and the source list expanded to files.
// Sources:
//  * fortune files (Debian package `fortunes`): entries separated by lines
//    holding a single '%'; one document per entry;
//  * dictd databases (Debian package `dict-gcide`, gcide.dict.dz — dictzip
//    is gzip-readable): one document per headword entry, with the dictd
//    header entries (00-database-*, licence text) dropped and GCIDE markup
//    removed (pronunciations \..\, source tags like [1913 Webster], accent
//    codes like [e^] -> e, {braces}); wrapped lines are re-flowed so each
//    paragraph is one line.
// Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace t5xx::seqio {

// {"/usr/share/games/fortunes/*", "/usr/share/dictd/gcide.dict.dz"}.
// A glob pattern keeps only non-hidden files that do not end in .dat or .u8
// (strfile indexes / UTF-8 symlink duplicates in `fortunes`); a symlink is
// kept only when its target is not matched as well.
std::vector<std::string> DefaultCorpusSources();

// One source document (exposed for tests and tools).
struct CorpusDocument {
  std::string url;
  std::string text;
};

// Parsers used by BuildCorpus: url = "file://" + path + "#<k>", k the 0-based
// index of the document in the file. Texts are valid UTF-8 (invalid bytes
// become U+FFFD). max_documents = 0: all. Both throw t5xx::Error naming the
// path when it cannot be read.
std::vector<CorpusDocument> ReadFortuneFile(const std::string& path,
                                            size_t max_documents = 0);
std::vector<CorpusDocument> ReadDictdFile(const std::string& path,
                                          size_t max_documents = 0);

// Cleans one GCIDE paragraph (already joined into one line): drops
// pronunciations and source tags, maps accent codes, removes braces,
// collapses spaces. Exposed for tests.
std::string CleanDictdParagraph(const std::string& paragraph);

// True for a dictd database name: ending in .dict, .dict.dz or .dict.gz.
bool IsDictdPath(const std::string& p);

// The files `srcs` name (globs expanded as DefaultCorpusSources says).
// Throws t5xx::Error naming a source that matches no readable file (with the
// Debian package that provides the default ones).
std::vector<std::string> ExpandSources(const std::vector<std::string>& srcs);

}  // namespace t5xx::seqio
