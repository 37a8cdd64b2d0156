# Two commands a newcomer needs: `make report` (the main job) and `make test`.
# Each creates .venv and installs the package with what it needs, once.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: report test test-all lint docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of torch first, so that the `torch` requirement does not pull a CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test,plots,ray]'
	touch $(STAMP)

report: $(STAMP)
	$(PY) -m verification --quick --out report

# The suite runs on one worker per core (pytest-xdist); tests of one xdist_group share a worker.
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m ruff check rlct numeric verification tests benchmarks notebooks
	$(PY) -m mkdocs build --strict --quiet --site-dir .site-check
	rm -rf .site-check
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=15

# The docs site: docs/findings.md is generated from numeric's registry of finding codes; the
# build treats warnings as errors (tests/test_docs.py runs the pages' examples).
docs: $(STAMP)
	$(PY) -c "from numeric.findings.codes import markdown; print(markdown(), end='')" > docs/findings.md
	$(PY) -m mkdocs build --strict

test-all: $(STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=15 --runslow

# Benchmarks (minutes to tens of minutes); results go to benchmarks/out/*.json, tables to RESULTS.md
# through benchmarks/render_results.py. devinterp comes from the `bench` extra.
bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/bench_quadratic_rank.py
	$(PY) benchmarks/bench_vs_devinterp.py
	$(PY) benchmarks/bench_numeric_scaling.py
	$(PY) benchmarks/render_results.py benchmarks/out/bench_vs_devinterp.json benchmarks/out/bench_numeric_scaling.json

clean:
	rm -rf $(VENV) report site .site-check .pytest_cache .hypothesis
