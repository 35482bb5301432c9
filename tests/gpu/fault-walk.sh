#!/usr/bin/env bash
# The GPU fault walk (issue 22; docs/reliability.md): for each command below, a run with
# NEARSCAPE_FAULT_GPU=list names every GPU failure site it reaches (allocations, cuBLAS calls,
# kernel launch checks) and the first N at which each is reached; then one run per site makes
# exactly that N-th call fail. Every run must end with a correct result (the CPU reference's
# distances, recall or bottleneck; the GPU retried in smaller tiles or the CPU took over) or a
# clear error (exit 1, a message naming the failed call, no output file) — never a signal, a
# hang (timeout), bad input's exit 2 or a wrong answer. Needs a GPU, python3 with NumPy.
#   tests/gpu/fault-walk.sh BINDIR DATADIR OUTDIR
# MAKE_DATA names the seeded data generator. BINDIR holds nearscape-cli (its plugin found as usual); DATADIR receives the data sets; the
# table (one line per run) and a summary go to OUTDIR/fault-walk.tsv and OUTDIR/fault-walk.md
# (each command's rows and log to OUTDIR/NAME.tsv and NAME.log as they come).
set -uo pipefail
bin=${1:?BINDIR}
data=${2:?DATADIR}
out=${3:?OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
cli=$bin/nearscape-cli
check="python3 $here/fault_check.py"
mkdir -p "$data" "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 20,000 × 64 on a 16-d manifold: large enough for every GPU path (tiles, GNND, IVF, layout),
# small enough for a few hundred runs.
# MAKE_DATA: the seeded data generator (PERFORMANCE.md's make-data; device-run.sh passes the pack's).
[ -f "$data/walk_base.npy" ] || python3 "${MAKE_DATA:?the make-data script}" manifold "$data/walk" 20000 64 500
D=$data/walk_base.npy
Q=$data/walk_query.npy

# name | arguments (O: this run's output folder) | what the check compares
commands=(
  "knn-graph|knn $D --k 10 --out O/ids.npy --out-dist O/dist.npy|dist"
  "knn-query|knn $D --queries $Q --k 100 --out O/ids.npy --out-dist O/dist.npy|dist"
  "knn-nndescent|knn $D --k 10 --method nndescent --truth $data/walk_truth.npy --json --out O/ids.npy|recall"
  "sweep-ivf|sweep $D --index ivf --holdout 200 --latency-queries 10 --json --out O/rows.csv|sweep"
  "sweep-graph|sweep $D --index graph --holdout 200 --latency-queries 10 --json --out O/rows.csv|sweep"
  "layout|layout $D --epochs 100 --out O/map.npy --json|layout"
  "path|path $D --from 0 --to 12345 --bridge --json|path"
)

# The exact truth for the NN-Descent recall, from the CPU.
[ -f "$data/walk_truth.npy" ] || "$cli" knn "$D" --k 10 --backend cpu --out "$data/walk_truth.npy" > /dev/null

run() { # NAME ARGS OUTDIR [FAULT]: runs one command; prints its exit status
  local args=${2//O\//$3/}
  mkdir -p "$3"
  NEARSCAPE_FAULT_GPU=${4:-} timeout -s KILL 300 $cli $args --threads "$threads" \
    > "$3/stdout" 2> "$3/stderr"
  echo $?
}

threads=$(( $(nproc) / ${#commands[@]} ))
[ "$threads" -ge 1 ] || threads=1

walk() { # ENTRY: walks one command; its rows go to $work/NAME.tsv, its log to $work/NAME.log
  local name args kind ref list rc totals site n where dir outcome detail
  IFS='|' read -r name args kind <<< "$1"
  exec > "$out/$name.log" 2>&1
  : > "$out/$name.tsv"
  ref=$work/$name/ref
  rc=$(NEARSCAPE_FAULT_GPU= run "$name" "$args --backend cpu" "$ref")
  [ "$rc" = 0 ] || { echo "$name: the CPU reference failed ($rc)"; cat "$ref/stderr"; return 1; }
  list=$work/$name/list
  rc=$(run "$name" "$args" "$list" list)
  if [ "$rc" != 0 ] || ! $check "$kind" "$ref" "$list" > "$list/check" 2>&1; then
    echo "$name: the run without a fault failed ($rc)"; cat "$list/stderr" "$list/check"; return 1
  fi
  totals=$(sed -n 's/^nearscape-fault: reached //p' "$list/stderr")
  printf '%s: reached %s\n' "$name" "$totals"
  # One run per site: KIND N FILE:LINE, at the first N that reaches it.
  while read -r site n where; do
    dir=$work/$name/$site-$n
    rc=$(run "$name" "$args" "$dir" "$site:$n")
    if [ "$rc" = 0 ]; then
      if detail=$($check "$kind" "$ref" "$dir" 2>&1); then outcome=correct; else outcome=WRONG; fi
    elif [ "$rc" = 1 ]; then
      detail=$(grep -v '^nearscape-fault' "$dir/stderr" | head -1 | cut -c1-160)
      if find "$dir" -name '*.npy' -o -name '*.csv' | grep -q .; then
        outcome=LEFT-OUTPUT
      elif [ -z "$detail" ]; then
        outcome=SILENT-ERROR
      else
        outcome=error
      fi
    else
      outcome=CRASH-OR-HANG
      detail=$(tail -2 "$dir/stderr" | tr '\n' ' ' | cut -c1-160)
    fi
    printf '%s\t%s:%s\t%s\t%s\t%s\t%s\n' "$name" "$site" "$n" "$where" "$rc" "$outcome" \
      "${detail//$'\t'/ }" >> "$out/$name.tsv"
    printf '  %-6s %-4s %-24s exit %-3s %s\n' "$site" "$n" "$where" "$rc" "$outcome"
  done < <(sed -n 's/^nearscape-fault: \(alloc\|cublas\|launch\) /\1 /p' "$list/stderr")
}

# The commands walk side by side (one GPU, many cores): each run is short and mostly start-up.
# Each gets its share of the cores (OpenMP's spinning threads slow to a crawl when oversubscribed).
pids=()
for entry in "${commands[@]}"; do
  walk "$entry" &
  pids+=($!)
done
broken=0
for pid in "${pids[@]}"; do wait "$pid" || broken=1; done
tsv=$out/fault-walk.tsv
printf 'command\tfault\tsite\texit\toutcome\tdetail\n' > "$tsv"
for entry in "${commands[@]}"; do
  name=${entry%%|*}
  cat "$out/$name.log"
  cat "$out/$name.tsv" >> "$tsv"
done
[ "$broken" = 0 ] || { echo "fault walk: a reference run failed"; exit 1; }
failures=$(awk -F'\t' 'NR > 1 && $5 != "correct" && $5 != "error"' "$tsv" | wc -l)

python3 - "$tsv" > "$out/fault-walk.md" << 'EOF'
import collections, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
by = collections.OrderedDict()
for command, fault, site, rc, outcome, detail in rows:
    by.setdefault(command, collections.Counter())[outcome] += 1
print('| command | sites walked | correct result | clear error | failures |')
print('|---|---|---|---|---|')
for command, c in by.items():
    bad = sum(v for k, v in c.items() if k not in ('correct', 'error'))
    print(f'| {command} | {sum(c.values())} | {c["correct"]} | {c["error"]} | {bad} |')
EOF
cat "$out/fault-walk.md"
echo "fault walk: $(($(wc -l < "$tsv") - 1)) runs, $failures failures"
[ "$failures" = 0 ]
