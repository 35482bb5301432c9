#!/usr/bin/env bash
# Tests the tests: applies each semantic mutation in tests/mutants/*.patch to a scratch copy of the
# working tree, rebuilds it incrementally (CPU only, ccache), runs the tests the patch names and
# reports whether they caught it. Exits 1 when a mutation survives (or a patch no longer applies
# or builds), 0 when every one was caught. Not run in CI: it takes minutes per mutation on 2 cores.
#
#   scripts/mutants.sh                    every patch
#   scripts/mutants.sh l2-squared ...     the named ones (file names without .patch)
#
# A patch starts with header lines, then a diff against the repository root (git diff):
#   # mutant: what the mutation breaks, in a line
#   # tests: tst_knn tst_index       (ctest names; without the line, every unit test runs)
# Make one with: edit the engine, `git diff -- engine` under those two lines, `git checkout engine`.
#
# Environment: NEARSCAPE_MUTANTS_DIR (the scratch folder; default build/mutants, kept between runs
# so that rebuilds stay incremental), NEARSCAPE_BUILD_LOCK (default /tmp/nearscape-build.lock:
# each build and test step takes it, so others can build in between), JOBS (default 2).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=${NEARSCAPE_MUTANTS_DIR:-$repo/build/mutants}
lock=${NEARSCAPE_BUILD_LOCK:-/tmp/nearscape-build.lock}
jobs=${JOBS:-2}
# The copy sits at the same depth as the repository's own build/test, so that ccache (with its
# base folder above both) sees the same relative paths and reuses earlier compilations.
src=$scratch/src
build=$src/build/test
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$repo")}

locked() {
  if command -v flock >/dev/null; then
    flock "$lock" "$@"
  else
    "$@"
  fi
}

patches=()
if [ $# -gt 0 ]; then
  for name in "$@"; do
    patches+=("$repo/tests/mutants/${name%.patch}.patch")
  done
else
  patches=("$repo"/tests/mutants/*.patch)
fi
for p in "${patches[@]}"; do
  [ -f "$p" ] || { echo "mutants.sh: no such patch: $p" >&2; exit 2; }
done

# 1. The scratch copy: tracked and untracked (not ignored) files, copied only where they differ
# (unchanged files keep their times, so the build stays incremental). A mutation left applied by
# an interrupted run is undone here too.
mkdir -p "$src"
(cd "$repo" && git ls-files -co --exclude-standard -z) |
  while IFS= read -r -d '' f; do
    [ -f "$repo/$f" ] || continue
    if ! cmp -s "$repo/$f" "$src/$f"; then
      mkdir -p "$(dirname "$src/$f")"
      cp -p "$repo/$f" "$src/$f"
    fi
  done

# 2. Configured once: CPU only, tests on, no GUI or benchmark.
if [ ! -f "$build/build.ninja" ]; then
  echo "== configuring $build"
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DNEARSCAPE_WITH_CUDA=OFF -DNEARSCAPE_BUILD_APP=OFF -DNEARSCAPE_BUILD_BENCH=OFF \
    -DNEARSCAPE_BUILD_TESTS=ON \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
fi

testsOf() { # the ctest names a patch lists, or every unit test
  local line
  line=$(grep -m1 '^# tests:' "$1" | sed 's/^# tests://') || true
  if [ -n "${line// /}" ]; then
    echo "$line"
  else
    locked ctest --test-dir "$build" -N -L unit | sed -n 's/^ *Test *#[0-9]*: //p' | tr '\n' ' '
  fi
}

runTests() { # build the named tests, run them; returns ctest's status (2: the build failed)
  local tests=("$@") regex
  regex="^($(IFS='|'; echo "${tests[*]}"))\$"
  locked cmake --build "$build" --parallel "$jobs" --target "${tests[@]}" >"$scratch/build.log" 2>&1 ||
    return 2
  locked ctest --test-dir "$build" -R "$regex" --timeout 600 --output-on-failure \
    >"$scratch/test.log" 2>&1
}

# 3. The unmutated baseline of every test any patch names must pass: a test that fails already
# would "catch" anything.
all=()
for p in "${patches[@]}"; do
  read -r -a t <<<"$(testsOf "$p")"
  all+=("${t[@]}")
done
read -r -a all <<<"$(printf '%s\n' "${all[@]}" | sort -u | tr '\n' ' ')"
echo "== baseline: ${all[*]}"
if ! runTests "${all[@]}"; then
  echo "mutants.sh: the unmutated tests fail; see $scratch/build.log and $scratch/test.log" >&2
  exit 2
fi

# 4. Each mutation: apply, rebuild, run its tests, revert.
results=()
survived=0
for p in "${patches[@]}"; do
  name=$(basename "$p" .patch)
  what=$(grep -m1 '^# mutant:' "$p" | sed 's/^# mutant: *//')
  read -r -a tests <<<"$(testsOf "$p")"
  start=$(date +%s)
  if ! (cd "$src" && patch -p1 -s --dry-run <"$p" >/dev/null 2>&1); then
    verdict="DOES NOT APPLY"
    survived=$((survived + 1))
  else
    (cd "$src" && patch -p1 -s <"$p")
    status=0
    runTests "${tests[@]}" || status=$?
    (cd "$src" && patch -p1 -s -R <"$p")
    case $status in
    0)
      verdict="SURVIVED"
      survived=$((survived + 1))
      ;;
    2)
      verdict="DOES NOT BUILD"
      survived=$((survived + 1))
      cp "$scratch/build.log" "$scratch/$name.build.log"
      ;;
    *)
      # The test functions that failed (Qt Test's "FAIL!  : TestKnn::ties(row)"), else the
      # executables ctest names (a crash, a timeout).
      failed=$(sed -n 's/^FAIL! *: *\([A-Za-z0-9_]*::[A-Za-z0-9_]*\).*/\1/p' "$scratch/test.log" |
        sort -u | head -3 | tr '\n' ' ')
      [ -n "$failed" ] || failed=$(grep -o 'tst_[a-z_0-9]* ([A-Za-z]*)' "$scratch/test.log" |
        sort -u | tr '\n' ' ')
      verdict="caught: ${failed:-ctest failed}"
      ;;
    esac
    cp "$scratch/test.log" "$scratch/$name.test.log" 2>/dev/null || true
  fi
  seconds=$(($(date +%s) - start))
  printf '%-36s %-70s %5ss\n' "$name" "$verdict" "$seconds"
  results+=("$(printf '%-36s %-70s %5ss  %s' "$name" "$verdict" "$seconds" "$what")")
done

# 5. The table (the last mutation's revert rebuilt nothing yet: the next run's step 1 and build
# see the scratch copy as unmutated again).
echo
printf '%-36s %-70s %6s  %s\n' "mutation" "result" "time" "what it breaks"
printf '%s\n' "${results[@]}"
echo
if [ "$survived" -gt 0 ]; then
  echo "mutants.sh: $survived of ${#patches[@]} mutations not caught (logs in $scratch)"
  exit 1
fi
echo "mutants.sh: all ${#patches[@]} mutations caught"
