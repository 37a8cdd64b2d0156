#!/usr/bin/env bash
# One device call for a GPU loan: where the warm-up's and the draws' time goes at 10⁸ parameters
# (bench_hvp.py; HVP=0 skips it), then the 10⁸-parameter deep linear network within a time budget
# (TF32, batch 2,048; DLN8_BUDGET, stopped at DLN8_TIMEOUT). COMPILE=1 compiles its kernel
# (≈ 90 s cold on the H200), DLN8_SIZE=1e6 runs the same job at 10⁶ parameters (a smoke test),
# GPU_TESTS=1 runs the GPU tests first (75 s on the fifth loan) and DLN6=1 the 10⁶ network with
# the defaults last. One device call runs at most 600 s. python-flint travels as a wheel in .whl
# (carry [".whl"]), for the tests; results in $OUT.
# DLN8=0 skips the 10⁸ run. A 15-minute loan (the fifth loan's lesson, benchmarks/RESULTS.md):
#   GPU_TESTS=1 HVP=1 DLN8=0  (≈ 4 minutes: the tests, then where the draws' time goes at 10⁸),
#   then at once, on the warm machine,
#   HVP=0 DLN8_BUDGET=460 DLN8_TIMEOUT=540  (the 10⁸ network, planned at 2.2× its gradients a step).
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-benchmarks/out}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1
python3 -c "import torch, flint; print(torch.__version__, flint.__version__)" | tee -a "$OUT/gpu.txt"
if [ "${GPU_TESTS:-0}" = 1 ]; then
  t0=$(date +%s)
  timeout "${TESTS_TIMEOUT:-150}" python3 -m pytest -q -m gpu --rungpu -n 6 -p no:cacheprovider -p no:benchmark \
    tests/test_numeric_gpu.py tests/test_numeric_kernel.py tests/test_numeric_llc.py \
    tests/test_numeric_restrict.py tests/test_numeric_series.py tests/test_numeric_spectrum.py \
    tests/test_numeric_observable.py \
    >"$OUT/gpu_tests.log" 2>&1
  echo "tests rc $? in $(($(date +%s) - t0)) s" | tee -a "$OUT/gpu.txt"
  tail -5 "$OUT/gpu_tests.log"
fi
if [ "${HVP:-1}" = 1 ]; then
  t0=$(date +%s)
  timeout "${HVP_TIMEOUT:-200}" python3 benchmarks/bench_hvp.py --tf32 --profile \
    --json "$OUT/bench_hvp.json" 2>&1 | tee "$OUT/bench_hvp.log"
  echo "bench_hvp in $(($(date +%s) - t0)) s" | tee -a "$OUT/gpu.txt"
fi
if [ "${DLN8:-1}" = 1 ]; then
  t0=$(date +%s)
  budget="${DLN8_BUDGET:-400}"
  compile=""
  if [ "${COMPILE:-0}" = 1 ]; then compile="--compile"; fi  # COMPILE=0 is off, as HVP=0 is
  # the run is stopped 70 s past its own budget (the profile and the estimate's end), whatever
  # the budget, unless DLN8_TIMEOUT says otherwise
  timeout -s INT "${DLN8_TIMEOUT:-$((budget + 70))}" python3 benchmarks/bench_gpu_llc.py \
    --only dln-1e8-fit --tf32 --batch 2048 --budget-s "$budget" --profile 30 $compile \
    --size "${DLN8_SIZE:-1e8}" --json "$OUT/dln_${DLN8_SIZE:-1e8}.json" 2>&1 \
    | tee "$OUT/dln_${DLN8_SIZE:-1e8}.log" | grep -v "^ "
  echo "dln-${DLN8_SIZE:-1e8} in $(($(date +%s) - t0)) s" | tee -a "$OUT/gpu.txt"
fi
if [ "${DLN6:-0}" = 1 ]; then
  t0=$(date +%s)
  timeout -s INT "${DLN6_TIMEOUT:-160}" python3 benchmarks/bench_gpu_llc.py --only dln-1e6 \
    --json "$OUT/dln_1e6.json" 2>&1 | tee "$OUT/dln_1e6.log"
  echo "dln-1e6 in $(($(date +%s) - t0)) s" | tee -a "$OUT/gpu.txt"
fi
