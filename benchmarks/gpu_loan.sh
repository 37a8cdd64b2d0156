#!/usr/bin/env bash
# One device call for a GPU loan (about 9 minutes): the GPU tests, the 10⁸-parameter deep linear
# network within a time budget (TF32, batch 2,048), and the 10⁶ one with the defaults.
# python-flint travels as a wheel in .whl (benchmarks/RESULTS.md, the H200 loans); results in $OUT.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-benchmarks/out}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1
python3 -c "import torch, flint; print(torch.__version__, flint.__version__)" | tee -a "$OUT/gpu.txt"
t0=$(date +%s)
timeout 120 python3 -m pytest -q -m gpu --rungpu -n 6 -p no:cacheprovider -p no:benchmark \
  tests/test_numeric_gpu.py tests/test_numeric_kernel.py tests/test_numeric_llc.py \
  tests/test_numeric_restrict.py tests/test_numeric_series.py tests/test_numeric_spectrum.py \
  >"$OUT/gpu_tests.log" 2>&1
echo "tests rc $? in $(($(date +%s) - t0)) s" | tee -a "$OUT/gpu.txt"
tail -5 "$OUT/gpu_tests.log"
t0=$(date +%s)
timeout -s INT "${DLN8_TIMEOUT:-330}" python3 benchmarks/bench_gpu_llc.py --only dln-1e8-fit \
  --tf32 --batch 2048 --budget-s "${DLN8_BUDGET:-265}" --profile 25 \
  --json "$OUT/dln_1e8.json" 2>&1 | tee "$OUT/dln_1e8.log" | grep -v "^ "
echo "dln-1e8 in $(($(date +%s) - t0)) s" | tee -a "$OUT/gpu.txt"
t0=$(date +%s)
timeout -s INT "${DLN6_TIMEOUT:-115}" python3 benchmarks/bench_gpu_llc.py --only dln-1e6 \
  --json "$OUT/dln_1e6.json" 2>&1 | tee "$OUT/dln_1e6.log"
echo "dln-1e6 in $(($(date +%s) - t0)) s" | tee -a "$OUT/gpu.txt"
