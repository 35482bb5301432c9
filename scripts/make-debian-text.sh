#!/usr/bin/env bash
# Builds the debian-text example data set: one item per Debian package, its name and long
# description as text, embedded with fastText sentence vectors trained on those descriptions.
#   scripts/make-debian-text.sh [--limit N] [--out DIR]
# Default DIR: $XDG_CACHE_HOME/nearscape/debian-text (or ~/.cache/nearscape/debian-text).
# Writes DIR/debian-text.npy (float32, n x 64) and DIR/debian-text.meta.tsv (label = Debian
# section, name, text). Everything is built in a temporary folder and moved into place at the
# end, so an interrupted run leaves nothing half-written. Does nothing when DIR is complete.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=0
out="${XDG_CACHE_HOME:-$HOME/.cache}/nearscape/debian-text"
while [[ $# -gt 0 ]]; do
  case $1 in
    --limit) limit=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--limit N] [--out DIR]" >&2; exit 2 ;;
  esac
done
if [[ -s "$out/debian-text.npy" && -s "$out/debian-text.meta.tsv" ]]; then
  echo "make-debian-text: $out is already built"
  exit 0
fi
command -v fasttext >/dev/null || { echo "make-debian-text: fasttext is missing (scripts/install-deps.sh)" >&2; exit 1; }

# The long English descriptions come with apt's Translation-en lists.
if ! ls /var/lib/apt/lists/*_i18n_Translation-en* >/dev/null 2>&1; then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -o Acquire::Languages=en
fi

mkdir -p "$(dirname "$out")"
work=$(mktemp -d "$(dirname "$out")/.debian-text.XXXXXX")
trap 'rm -rf "$work"' EXIT
for f in /var/lib/apt/lists/*_i18n_Translation-en*; do /usr/lib/apt/apt-helper cat-file "$f"; echo; done >"$work/translations.txt"
for f in /var/lib/apt/lists/*_binary-*_Packages*; do /usr/lib/apt/apt-helper cat-file "$f"; echo; done >"$work/packages.txt"

/usr/bin/python3 scripts/debian_text.py prepare "$work" "$limit"
# Sentence vectors need word vectors: a small skipgram model trained on the descriptions.
fasttext skipgram -input "$work/corpus.txt" -output "$work/model" -dim 64 -epoch 5 -minn 0 -maxn 0 \
  -minCount 2 -thread "$(nproc)" -verbose 0
fasttext print-sentence-vectors "$work/model.bin" <"$work/corpus.txt" >"$work/vectors.txt"
/usr/bin/python3 scripts/debian_text.py finish "$work"

mkdir -p "$out"
mv "$work/debian-text.meta.tsv" "$out/"
mv "$work/debian-text.npy" "$out/"   # last: its presence means the set is complete
echo "make-debian-text: wrote $out ($(wc -l <"$out/debian-text.meta.tsv") lines of metadata)"
