#pragma once
// The words of a text column and their class-based TF-IDF (BERTopic's c-TF-IDF, Grootendorst
// 2022, §3.3): what ClusterLabels names its clusters with. Internal to the engine.

#include "nearscape/core/JobControl.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nearscape::analysis {

/// True for a common English word that names no topic ("the", "with", "which", ...). `word` is
/// lower-case.
bool isStopWord(std::string_view word);

/// The distinct words of `text`, in order of first appearance: runs of ASCII letters and digits
/// and of non-ASCII bytes (UTF-8 letters stay whole), lower-cased, without stop words, numbers
/// and words shorter than `minLength` bytes.
std::vector<std::string> distinctWords(std::string_view text, int minLength);

/// Each text as the set of its distinct words, over one vocabulary.
struct WordSets {
  std::vector<std::string> vocabulary; ///< word id → word, in order of first appearance
  std::vector<std::int64_t> offsets;   ///< texts + 1: text i's words are words[offsets[i]..]
  std::vector<std::int32_t> words;     ///< word ids
  std::vector<std::int64_t> textsWith; ///< word id → texts holding it (document frequency)
};

/// The word sets of `texts` (distinctWords of each). Checks `job` every few thousand texts.
WordSets wordSets(const std::vector<std::string>& texts, int minLength, JobControl& job);

struct ScoredWord {
  std::int32_t word = -1; ///< id in WordSets::vocabulary
  double score = 0;
};

/// For each of `clusters` clusters (`assignment`: a cluster per text, −1 for none), its `count`
/// best words by c-TF-IDF, best first (ties to the word that sorts first): a word's share of the
/// cluster's texts, tf = texts of c with t / |c|, times log(1 + A / f_t), where A is the mean
/// number of texts per cluster and f_t the texts holding t overall. Texts are counted instead of
/// occurrences so that one long text that repeats a word does not name its cluster. A word held by
/// fewer than `minTexts` of the cluster's texts is left out, and so is a word that only extends,
/// shortens or holds one already chosen ("python" after "python3", "libboost" after "boost").
std::vector<std::vector<ScoredWord>> topWords(const WordSets& sets,
                                              const std::vector<std::int32_t>& assignment,
                                              int clusters, int count, int minTexts);

} // namespace nearscape::analysis
