// NLTK's Porter stemmer (porter_stemmer.h) on the examples of Porter's paper
// and NLTK's own mode differences; metrics_golden_test checks ~1000 more
// words in all three modes against NLTK's output.
#include "t5xx/metrics/porter_stemmer.h"

#include <gtest/gtest.h>

namespace t5xx::seqio {
namespace {

using Mode = PorterStemmer::Mode;

TEST(PorterStemmer, PaperStepExamplesThatNoLaterStepChanges) {
  const PorterStemmer original(Mode::kOriginalAlgorithm);
  // Step 1a: SSES -> SS, IES -> I, SS -> SS, S -> "".
  EXPECT_EQ(original.stem("caresses"), "caress");
  EXPECT_EQ(original.stem("ponies"), "poni");
  EXPECT_EQ(original.stem("caress"), "caress");
  EXPECT_EQ(original.stem("cats"), "cat");
  // Step 1b: (m>0) EED -> EE; (*v*) ED/ING removed; *d -> single letter.
  EXPECT_EQ(original.stem("feed"), "feed");
  EXPECT_EQ(original.stem("plastered"), "plaster");  // step 4 "er" needs m > 1; "plast" has m 1
  EXPECT_EQ(original.stem("bled"), "bled");          // "bl" has no vowel
  EXPECT_EQ(original.stem("motoring"), "motor");
  EXPECT_EQ(original.stem("sing"), "sing");
  EXPECT_EQ(original.stem("hopping"), "hop");
  EXPECT_EQ(original.stem("falling"), "fall");  // double l is kept in step 1b
  EXPECT_EQ(original.stem("hissing"), "hiss");
  // Step 1b's (m=1 and *o) -> E, then step 5a keeps the e (m=1 and *o).
  EXPECT_EQ(original.stem("filing"), "file");
  // Step 1c: (*v*) Y -> I.
  EXPECT_EQ(original.stem("happy"), "happi");
  EXPECT_EQ(original.stem("sky"), "sky");
  // Step 5b: (m > 1 and *d and *L) -> single letter.
  EXPECT_EQ(original.stem("controll"), "control");
  EXPECT_EQ(original.stem("roll"), "roll");
}

TEST(PorterStemmer, NltkExtensions) {
  const PorterStemmer nltk;  // NLTK_EXTENSIONS, rouge-score's
  // Irregular forms.
  EXPECT_EQ(nltk.stem("dying"), "die");
  EXPECT_EQ(nltk.stem("skies"), "sky");
  EXPECT_EQ(nltk.stem("news"), "news");
  // 4-letter "ies"/"ied" words keep "ie"; longer "ied" -> "i".
  EXPECT_EQ(nltk.stem("ties"), "tie");
  EXPECT_EQ(nltk.stem("tied"), "tie");
  EXPECT_EQ(PorterStemmer(Mode::kOriginalAlgorithm).stem("ties"), "ti");
  // y -> i only after a consonant that is not the whole stem: "by" stays
  // (and words of 2 letters are never stemmed outside the original mode).
  EXPECT_EQ(nltk.stem("by"), "by");
  EXPECT_EQ(nltk.stem("say"), "say");
  EXPECT_EQ(PorterStemmer(Mode::kOriginalAlgorithm).stem("say"), "sai");
  // Upper case is lowered first (to_lowercase=True).
  EXPECT_EQ(nltk.stem("CATS"), "cat");
  EXPECT_EQ(PorterStemmer::Stem("running"), "run");
}

TEST(PorterStemmer, YRunsAlternate) {
  // "syzygy": s y z y g y; the first y (after a consonant) is a vowel.
  // Measure of a run of y's stays linear (NLTK's redos fix); no crash or
  // slowness for a long run.
  EXPECT_EQ(PorterStemmer().stem("syzygy"), "syzygi");
  EXPECT_EQ(PorterStemmer().stem(std::string(20000, 'y')).size(), 20000u);
}

}  // namespace
}  // namespace t5xx::seqio
