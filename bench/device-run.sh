#!/usr/bin/env bash
# Runs on the GPU server (see docs/benchmarks.md): unpacks the bundle that device-pack made,
# runs the GPU tests, then the benchmark suites named in $SUITES. Logs go to $OUT.
#   bench/device-run.sh PACKDIR        PACKDIR holds gpu.tar.xz, make-data, fashion-mnist/
set -uo pipefail
pack=${1:-.gpu-pack}
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/data
tar -C /tmp -xJf "$pack/gpu.tar.xz"
export LD_LIBRARY_PATH=/tmp/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bin=/tmp/.gpu/bin
# The tests open the default data set where Debian puts it.
[ -e /usr/share/datasets/fashion-mnist ] ||
  { mkdir -p /usr/share/datasets && ln -s "$(realpath "$pack")/fashion-mnist" /usr/share/datasets/fashion-mnist; } 2>/dev/null
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
for s in ${SUITES:-tests fashion}; do
  case $s in
    tests)
      # The CUDA plugin lies in .gpu/lib beside libnearscape_engine.so, where the loader looks.
      [ -f /tmp/.gpu/lib/libnearscape_cuda.so ] || echo "no libnearscape_cuda.so in the pack: the GPU tests will skip" | tee -a "$out/tests.log"
      [ -x $bin/nearscape-cli ] && $bin/nearscape-cli self-test 2>&1 | tee -a "$out/tests.log"
      for t in tst_gpu_norms tst_gpu_primitives; do $bin/$t 2>&1 | tail -3 | tee -a "$out/tests.log"; done
      $bin/tst_knn 2>&1 | grep -E "FAIL|Totals|what|Loc" | tee -a "$out/tests.log"
      for t in tst_nndescent tst_graph tst_layout tst_index tst_duplicates tst_devices; do [ -x $bin/$t ] && $bin/$t 2>&1 | grep -E "FAIL|Totals" | tee -a "$out/tests.log"; done ;;
    faults)
      # The GPU fault walk (docs/reliability.md): every allocation, cuBLAS and launch site fails
      # once. Its many files stay here; the table comes back (whole, or as far as it got).
      MAKE_DATA="$pack/make-data" timeout "${FAULT_TIMEOUT:-540}" tests/gpu/fault-walk.sh "$bin" \
        /tmp/data /tmp/faults > "$out/faults.log" 2>&1
      if [ -f /tmp/faults/fault-walk.md ]; then cp /tmp/faults/fault-walk.md /tmp/faults/fault-walk.tsv "$out/"
      else cat /tmp/faults/*.log >> "$out/faults.log"; cat /tmp/faults/*.tsv > "$out/fault-walk.tsv"; fi ;;
    duplicates)
      # The GPU's pairs must be the CPU's, byte for byte; then fashion and 10M × 96 timed.
      for b in cuda cpu; do
        $bin/nearscape-cli duplicates "$pack/fashion-mnist" --quantile 0.01 --backend $b \
          --pairs /tmp/dup-$b.tsv --json > "$out/dup-fashion-$b.json" 2>> "$out/bench.log"
      done
      cmp /tmp/dup-cuda.tsv /tmp/dup-cpu.tsv && echo "fashion-mnist pairs: GPU = CPU ($(wc -l < /tmp/dup-cpu.tsv) lines)" | tee -a "$out/bench.log"
      $bin/nearscape-bench duplicates --data "$pack/fashion-mnist" --label fashion-mnist \
        --quantile 0.01 --backend cuda --peer none --repeats 3 2>&1 | tee -a "$out/bench.log"
      [ -f /tmp/data/m10_base.npy ] || python3 "$pack/make-data" manifold /tmp/data/m10 10000000 96 1000
      for q in ${DUP_QUANTILES:-0.001 0.01}; do
        for shape in ${DUP_SHAPES:-512x16}; do
          $bin/nearscape-bench duplicates --data /tmp/data/m10_base.npy --label manifold-10M-96 \
            --quantile $q --backend cuda --peer none --tile-rows ${shape%x*} --box-dims ${shape#*x} \
            --json-out "$out/dup-m10-$q-$shape.json" 2>&1 | tee -a "$out/bench.log"
        done
      done ;;
    fashion)
      $bin/nearscape-bench exact --data "$pack/fashion-mnist" --label fashion-mnist --k 10 \
        --backend cuda --peer torch-fp32 --python python3 --peers-dir bench/peers --repeats 3 \
        --check-rows 5000 --json-out "$out/fashion.json" 2>&1 | tee -a "$out/bench.log" ;;
    fashion-tf32)
      $bin/nearscape-bench exact --data "$pack/fashion-mnist" --label fashion-mnist --k 10 \
        --backend cuda --peer torch-tf32 --python python3 --peers-dir bench/peers --repeats 3 \
        --check-rows 2000 --json-out "$out/fashion-tf32.json" 2>&1 | tee -a "$out/bench.log" ;;
    blobs)
      [ -f /tmp/data/blobs_base.npy ] || python3 "$pack/make-data" blobs /tmp/data/blobs 1000000 128 10000
      $bin/nearscape-bench exact --data /tmp/data/blobs_base.npy --label blobs-1M-128 --k 10 \
        --backend cuda --peer torch-fp32 --python python3 --peers-dir bench/peers --repeats 2 \
        --check-rows 1000 --json-out "$out/blobs.json" 2>&1 | tee -a "$out/bench.log" ;;
    blobs-search)
      [ -f /tmp/data/blobs_base.npy ] || python3 "$pack/make-data" blobs /tmp/data/blobs 1000000 128 10000
      $bin/nearscape-bench exact --data /tmp/data/blobs_base.npy --queries /tmp/data/blobs_query.npy \
        --label blobs-1M-128 --k 10 --backend cuda --peer torch-fp32 --python python3 \
        --peers-dir bench/peers --repeats 3 --check-rows 1000 --json-out "$out/blobs-search.json" \
        2>&1 | tee -a "$out/bench.log" ;;
    topk)
      [ -f /tmp/data/blobs_base.npy ] || python3 "$pack/make-data" blobs /tmp/data/blobs 1000000 128 10000
      $bin/nearscape-bench topk --data /tmp/data/blobs_base.npy --queries /tmp/data/blobs_query.npy \
        --label blobs-1M-128 --k 10,100,1000,100000 --count 50 --backend cuda --python python3 \
        --peers-dir bench/peers --json-out "$out/topk.json" 2>&1 | tee -a "$out/bench.log" ;;
    blobs-resident)
      [ -f /tmp/data/blobs_base.npy ] || python3 "$pack/make-data" blobs /tmp/data/blobs 1000000 128 10000
      $bin/nearscape-bench exact --data /tmp/data/blobs_base.npy --queries /tmp/data/blobs_query.npy \
        --resident --label blobs-1M-128 --k 10 --backend cuda --peer torch-fp32 --python python3 \
        --peers-dir bench/peers --repeats 5 --check-rows 1000 --json-out "$out/blobs-resident.json" \
        2>&1 | tee -a "$out/bench.log" ;;
    gnnd-manifold-10m)
      [ -f /tmp/data/m10_base.npy ] || python3 "$pack/make-data" manifold /tmp/data/m10 10000000 96 1000
      $bin/nearscape-bench nndescent --data /tmp/data/m10_base.npy --label manifold-10M-96 --k 10 \
        --backend cuda --peer none --memory-budget ${BUDGET:-7800M} --check-rows 1000 --repeats ${REPEATS:-3} ${NND:-} \
        2>&1 | tee -a "$out/bench.log" ;;
    index-manifold|index-blobs)
      set=${s#index-}
      [ -f /tmp/data/${set}_base.npy ] || python3 "$pack/make-data" $set /tmp/data/$set 1000000 128 10000
      $bin/nearscape-bench index --data /tmp/data/${set}_base.npy --queries /tmp/data/${set}_query.npy \
        --label $set-1M-128 --k 10 --backend cuda --index ${INDEX:-graph} ${BUILD:-} \
        --values ${VALUES:-10,16,24,32,48,64,96,128,192,256,384,512} --target 0.99 \
        --json "$out/$s.json" 2>&1 | tee -a "$out/bench.log" ;;
    gnnd-manifold|gnnd-fashion)
      if [ $s = gnnd-fashion ]; then data="$pack/fashion-mnist"; label=fashion-mnist; else
        [ -f /tmp/data/manifold_base.npy ] || python3 "$pack/make-data" manifold /tmp/data/manifold 1000000 128 10000
        data=/tmp/data/manifold_base.npy; label=manifold-1M-128; fi
      $bin/nearscape-bench nndescent --data "$data" --label $label --k ${K:-10} --backend cuda \
        --peer exact --repeats ${REPEATS:-2} ${NND:-} 2>&1 | tee -a "$out/bench.log" ;;
    map-manifold|map-fashion)
      if [ $s = map-fashion ]; then data="$pack/fashion-mnist"; label=fashion-mnist; else
        [ -f /tmp/data/manifold_base.npy ] || python3 "$pack/make-data" manifold /tmp/data/manifold 1000000 128 10000
        data=/tmp/data/manifold_base.npy; label=manifold-1M-128; fi
      $bin/nearscape-bench mst --data "$data" --label $label --k 10 --backend cuda 2>&1 | tee -a "$out/bench.log"
      $bin/nearscape-bench layout --data "$data" --label $label --dim ${DIM:-2} --peer none \
        --backend cuda --json-out "$out/$s.json" 2>&1 | tee -a "$out/bench.log" ;;
  esac
done
