#!/usr/bin/env bash
# The hardening step of CI (issue 22; README "Hardening"), run by scripts/test.sh after the test
# suites. Three stages, each in its own build folder, CPU only (the GPU code is not built):
#   fuzz  build/fuzz  (preset fuzz: clang, libFuzzer + ASan + UBSan): every fuzz target of
#         tests/fuzz runs NEARSCAPE_FUZZ_SECONDS (default 15) from its corpus, build/fuzz/corpus/
#         <target> (the seeds, and what earlier runs on this machine added); any crash,
#         sanitizer report, hang (-timeout) or memory blow-up (-rss_limit_mb) fails, and its input
#         is kept in build/fuzz/test-artifacts/<target>/. The seeds and the regression files of
#         tests/fuzz/regressions/ are replayed first (ctest -L fuzz).
#   asan  build/asan  (preset asan: g++, ASan + UBSan): the engine, the CLI and the unit and CLI
#         tests (ctest -L unit, the fuzz regressions included) with no report; then the GUI
#         monkey (tst_gui_monkey: random input to the explorer for 30 s) under Xvfb.
#   tsan  build/tsan  (preset tsan: clang, TSan; OpenMP through LLVM's libomp with its Archer
#         tool): the tests that run threads — tst_knn, tst_nndescent, tst_index, tst_outputs, tst_devices,
#         tst_exact_pairs (the graph's tile pairs a worker each), tst_pair_paths (Dijkstra beside the
#         forest).
#
#   scripts/ci-hardening.sh [fuzz|asan|tsan]...      (default: all three)
# Environment: NEARSCAPE_FUZZ_SECONDS (per target), NEARSCAPE_FUZZ_TARGETS (a space-separated
# list instead of all but hdf5_raw), NEARSCAPE_HARDENING_JOBS (build jobs; default: every core, as
# scripts/test.sh builds). A long fuzzing run: NEARSCAPE_FUZZ_SECONDS=3600 scripts/ci-hardening.sh fuzz Builds go through ccache when it is installed.
# Exits non-zero when any stage fails; prints how long each took.
set -uo pipefail
cd "$(dirname "$0")/.."

stages=("$@")
[[ ${#stages[@]} -gt 0 ]] || stages=(fuzz asan tsan)
jobs=${NEARSCAPE_HARDENING_JOBS:-$(nproc)}
fuzz_seconds=${NEARSCAPE_FUZZ_SECONDS:-15}
# hdf5_raw fuzzes libhdf5 itself (its findings are upstream bugs): by hand only (README).
fuzz_targets=(npy_header npy vecs tsv_vectors idx hdf5 metadata_tsv graph_file index_file cache_entry
  study_csv regex_search session)
if [[ -n "${NEARSCAPE_FUZZ_TARGETS:-}" ]]; then
  read -r -a fuzz_targets <<< "$NEARSCAPE_FUZZ_TARGETS"
fi
# Threads under TSan: enough to interleave, few enough to stay quick on two cores.
tsan_tests='^(tst_knn|tst_nndescent|tst_index|tst_outputs|tst_devices|tst_exact_pairs|tst_pair_paths)$'

source scripts/build-config.sh
nearscape_ccache_launcher # CI builds a fresh clone each time: one clone's objects serve the next
sanitizers=$PWD/tests/sanitizers
# Every finding is fatal and symbolised; third-party suppressions only (each with its reason).
export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$sanitizers/lsan.supp:print_suppressions=0"

status=0
failed=()
start_all=$SECONDS

run_stage() { # NAME COMMAND...: runs one stage, records its time and failure
  local name=$1 t0=$SECONDS
  shift
  printf '== hardening: %s\n' "$name"
  if "$@"; then
    printf '== hardening: %s passed: %ds\n' "$name" $((SECONDS - t0))
  else
    printf '== hardening: %s FAILED: %ds\n' "$name" $((SECONDS - t0))
    failed+=("$name")
    status=1
  fi
}

configure() { # PRESET: configures build/PRESET from CMakePresets.json, with ccache when present
  mkdir -p build
  cmake --preset "$1" "${launcher[@]}" > "build/$1.configure.log" 2>&1 ||
    { cat "build/$1.configure.log"; return 1; }
}

fuzz_stage() {
  local dir=build/fuzz
  configure fuzz || return 1
  cmake --build "$dir" --target fuzz_targets --parallel "$jobs" || return 1
  # The seeds (valid files) and the regression inputs (each once crashed a target) must pass.
  ctest --test-dir "$dir" -L fuzz --output-on-failure || return 1
  local ok=0 target corpus artifacts log
  rm -rf "$dir/test-artifacts"
  for target in "${fuzz_targets[@]}"; do
    corpus=$dir/corpus/$target
    artifacts=$dir/test-artifacts/$target
    log=$dir/test-artifacts/$target.log
    mkdir -p "$corpus" "$artifacts"
    cp -n "$dir/tests/fuzz/seeds/$target"/* "$corpus"/ # the corpus grows from run to run
    if "$dir/tests/fuzz/fuzz_$target" "$corpus" -max_total_time="$fuzz_seconds" -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$artifacts/" -print_final_stats=1 > "$log" 2>&1; then
      printf '   fuzz_%-13s %8s runs, %s; no crash\n' "$target" \
        "$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")" \
        "$(grep -o 'cov: [0-9]*' "$log" | tail -1)"
      rm -rf "$artifacts" "$log"
    else
      ok=1
      echo "   fuzz_$target FAILED; the report:"
      grep -E -A40 '^==[0-9]+==|runtime error|ERROR: libFuzzer' "$log" | head -60
      echo "   input kept in $artifacts/ (log: $log); reproduce: $dir/tests/fuzz/fuzz_$target $artifacts/<file>"
      echo "   once fixed, add it as tests/fuzz/regressions/$target/<what-it-was>"
    fi
  done
  return $ok
}

asan_stage() {
  local dir=build/asan
  configure asan || return 1
  cmake --build "$dir" --parallel "$jobs" || return 1
  # programs_link_no_cuda checks the release programs' linking, not behaviour: sanitizer runtimes
  # link other libraries (libcurl through HDF5, which its pattern 'libcu' takes for CUDA).
  ctest --test-dir "$dir" -L unit -E '^programs_link_no_cuda$' --output-on-failure --timeout 900 ||
    return 1
  # The GUI monkey: random input to the explorer under ASan + UBSan. Leaks are not looked for
  # there (Mesa, fontconfig and Qt keep allocations until exit by design), nor strict string
  # reads: libxkbcommon-x11 strndup()s a buffer with no terminating NUL within its length, which
  # strict_string_checks reports as an overflow in Qt's start, before any code of ours runs.
  ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0:strict_string_checks=0" NEARSCAPE_MONKEY_SECONDS=30 \
    xvfb-run -a -s "-screen 0 1600x1000x24" \
    ctest --test-dir "$dir" -L monkey --output-on-failure --timeout 900
}

tsan_stage() {
  local dir=build/tsan
  configure tsan || return 1
  cmake --build "$dir" --parallel "$jobs" --target tst_knn tst_nndescent tst_index tst_outputs tst_devices \
    tst_exact_pairs tst_pair_paths ||
    return 1
  # libomp reports its barriers and tasks to TSan through LLVM's Archer tool (named here, not
  # left to libomp's own search). ignore_noninstrumented_modules: accesses that uninstrumented
  # libraries make through intercepted calls (OpenBLAS's worker threads memset-ing a GEMM's
  # output, Qt's own threads) are not checked: those libraries hand results over through their
  # own spin-waits and futexes, which TSan cannot see. Our code's accesses are all checked.
  local archer
  archer=$(find /usr/lib/llvm-*/lib -name libarcher.so 2> /dev/null | sort -V | tail -1)
  OMP_TOOL_LIBRARIES=$archer \
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$sanitizers/tsan.supp" \
    ctest --test-dir "$dir" -R "$tsan_tests" --output-on-failure --timeout 900
}

for s in "${stages[@]}"; do
  case $s in
  fuzz) run_stage "fuzz (${#fuzz_targets[@]} targets × ${fuzz_seconds} s)" fuzz_stage ;;
  asan) run_stage "ASan + UBSan (unit and CLI tests, the GUI monkey)" asan_stage ;;
  tsan) run_stage "TSan (threaded tests)" tsan_stage ;;
  *)
    echo "ci-hardening: unknown stage '$s' (fuzz, asan, tsan)" >&2
    exit 2
    ;;
  esac
done
printf '== hardening: %ds in all%s\n' $((SECONDS - start_all)) \
  "${failed[*]:+; FAILED: ${failed[*]}}"
exit $status
