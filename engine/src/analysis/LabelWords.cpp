#include "analysis/LabelWords.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <unordered_map>

namespace nearscape::analysis {
namespace {

// Common English words that name no topic (a shortened form of the usual lists: articles,
// pronouns, auxiliaries, prepositions, conjunctions, and adverbs of degree), sorted once for a
// binary search.
constexpr std::string_view kStopWords[] = {
    "about",    "above",      "after",     "again",   "against", "all",        "also",
    "although", "always",     "among",     "and",     "another", "any",        "are",
    "around",   "because",    "been",      "before",  "being",   "below",      "between",
    "both",     "but",        "can",       "cannot",  "could",   "did",        "does",
    "doing",    "done",       "down",      "during",  "each",    "either",     "else",
    "etc",      "even",       "ever",      "every",   "few",     "for",        "from",
    "further",  "had",        "has",       "have",    "having",  "her",        "here",
    "hers",     "herself",    "him",       "himself", "his",     "how",        "however",
    "into",     "its",        "itself",    "just",    "least",   "less",       "like",
    "made",     "make",       "makes",     "many",    "may",     "might",      "more",
    "most",     "much",       "must",      "neither", "never",   "nor",        "not",
    "now",      "off",        "often",     "once",    "one",     "only",       "onto",
    "other",    "others",     "otherwise", "our",     "ours",    "ourselves",  "out",
    "over",     "own",        "per",       "perhaps", "quite",   "rather",     "same",
    "several",  "she",        "should",    "since",   "some",    "such",       "than",
    "that",     "the",        "their",     "theirs",  "them",    "themselves", "then",
    "there",    "therefore",  "these",     "they",    "this",    "those",      "though",
    "through",  "thus",       "too",       "under",   "until",   "upon",       "use",
    "used",     "uses",       "using",     "very",    "via",     "was",        "way",
    "well",     "were",       "what",      "when",    "where",   "whether",    "which",
    "while",    "who",        "whom",      "whose",   "why",     "will",       "with",
    "within",   "without",    "would",     "yet",     "you",     "your",       "yours",
    "yourself", "yourselves", "able",      "across",  "already", "along",      "anything",
    "become",   "becomes",    "given",     "gives",   "let",
};

bool isWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

bool allDigits(std::string_view word) {
  return std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

const std::vector<std::string_view>& sortedStopWords() {
  static const std::vector<std::string_view> sorted = [] {
    std::vector<std::string_view> s(std::begin(kStopWords), std::end(kStopWords));
    std::sort(s.begin(), s.end());
    return s;
  }();
  return sorted;
}

/// Calls `onWord` with each kept word of `text`, in order (repeats included).
template <typename OnWord> void forEachWord(std::string_view text, int minLength, OnWord onWord) {
  std::string word;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !isWordByte(static_cast<unsigned char>(text[i])))
      ++i;
    word.clear();
    while (i < text.size() && isWordByte(static_cast<unsigned char>(text[i]))) {
      char c = text[i++];
      if (c >= 'A' && c <= 'Z')
        c = char(c - 'A' + 'a');
      word.push_back(c);
    }
    if (int(word.size()) >= minLength && !allDigits(word) && !isStopWord(word))
      onWord(word);
  }
}

/// One word extends or shortens the other ("python", "python3"; "library", "libraries" share
/// their first six letters and say the same; "libboost" holds "boost").
bool sameStem(std::string_view a, std::string_view b) {
  const std::size_t common = std::min(a.size(), b.size());
  if (a.substr(0, common) == b.substr(0, common))
    return true;
  const std::size_t stem = 6, inside = 4;
  if (common >= stem && a.substr(0, stem) == b.substr(0, stem))
    return true;
  const std::string_view shorter = a.size() < b.size() ? a : b;
  const std::string_view longer = a.size() < b.size() ? b : a;
  return shorter.size() >= inside && longer.find(shorter) != std::string_view::npos;
}

} // namespace

bool isStopWord(std::string_view word) {
  const auto& s = sortedStopWords();
  return std::binary_search(s.begin(), s.end(), word);
}

std::vector<std::string> distinctWords(std::string_view text, int minLength) {
  std::vector<std::string> out;
  forEachWord(text, minLength, [&](const std::string& w) {
    if (std::find(out.begin(), out.end(), w) == out.end())
      out.push_back(w);
  });
  return out;
}

WordSets wordSets(const std::vector<std::string>& texts, int minLength, JobControl& job) {
  WordSets sets;
  sets.offsets.reserve(texts.size() + 1);
  sets.offsets.push_back(0);
  std::unordered_map<std::string, std::int32_t> ids;
  std::vector<std::int32_t> seen; // this text's ids, to keep each once
  for (std::size_t t = 0; t < texts.size(); ++t) {
    if ((t & 4095) == 0)
      job.check();
    seen.clear();
    forEachWord(texts[t], minLength, [&](const std::string& w) {
      auto [it, added] = ids.try_emplace(w, std::int32_t(sets.vocabulary.size()));
      if (added) {
        sets.vocabulary.push_back(w);
        sets.textsWith.push_back(0);
      }
      if (std::find(seen.begin(), seen.end(), it->second) == seen.end())
        seen.push_back(it->second);
    });
    for (const std::int32_t id : seen) {
      sets.words.push_back(id);
      ++sets.textsWith[std::size_t(id)];
    }
    sets.offsets.push_back(std::int64_t(sets.words.size()));
  }
  return sets;
}

std::vector<std::vector<ScoredWord>> topWords(const WordSets& sets,
                                              const std::vector<std::int32_t>& assignment,
                                              int clusters, int count, int minTexts) {
  // The clusters' members, grouped (a counting sort keeps each cluster's texts in id order).
  std::vector<std::int64_t> start(std::size_t(clusters) + 1, 0);
  for (const std::int32_t c : assignment)
    if (c >= 0)
      ++start[std::size_t(c) + 1];
  for (int c = 0; c < clusters; ++c)
    start[std::size_t(c) + 1] += start[std::size_t(c)];
  std::vector<std::int64_t> members(std::size_t(start.back()));
  std::vector<std::int64_t> next(start.begin(), start.end() - 1);
  for (std::size_t t = 0; t < assignment.size(); ++t)
    if (assignment[t] >= 0)
      members[std::size_t(next[std::size_t(assignment[t])]++)] = std::int64_t(t);

  const double meanTexts = double(members.size()) / std::max(clusters, 1);
  std::vector<std::int64_t> inCluster(sets.vocabulary.size(), 0);
  std::vector<std::int32_t> touched;
  std::vector<std::vector<ScoredWord>> out(static_cast<std::size_t>(clusters));
  for (int c = 0; c < clusters; ++c) {
    const std::int64_t size = start[std::size_t(c) + 1] - start[std::size_t(c)];
    if (size == 0)
      continue;
    touched.clear();
    for (std::int64_t m = start[std::size_t(c)]; m < start[std::size_t(c) + 1]; ++m) {
      const std::int64_t t = members[std::size_t(m)];
      for (std::int64_t w = sets.offsets[std::size_t(t)]; w < sets.offsets[std::size_t(t) + 1];
           ++w) {
        const std::int32_t id = sets.words[std::size_t(w)];
        if (inCluster[std::size_t(id)]++ == 0)
          touched.push_back(id);
      }
    }
    std::vector<ScoredWord> scored;
    for (const std::int32_t id : touched) {
      const std::int64_t held = inCluster[std::size_t(id)];
      inCluster[std::size_t(id)] = 0;
      if (held < minTexts)
        continue;
      const double tf = double(held) / double(size);
      const double idf = std::log(1.0 + meanTexts / double(sets.textsWith[std::size_t(id)]));
      scored.push_back({id, tf * idf});
    }
    std::sort(scored.begin(), scored.end(), [&](const ScoredWord& a, const ScoredWord& b) {
      if (a.score != b.score)
        return a.score > b.score;
      return sets.vocabulary[std::size_t(a.word)] < sets.vocabulary[std::size_t(b.word)];
    });
    auto& best = out[std::size_t(c)];
    for (const ScoredWord& s : scored) {
      if (int(best.size()) >= count)
        break;
      const std::string& word = sets.vocabulary[std::size_t(s.word)];
      const bool repeats = std::any_of(best.begin(), best.end(), [&](const ScoredWord& b) {
        return sameStem(word, sets.vocabulary[std::size_t(b.word)]);
      });
      if (!repeats)
        best.push_back(s);
    }
  }
  return out;
}

} // namespace nearscape::analysis
