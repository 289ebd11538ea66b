# Set-up and everyday commands. `make demo` and `make test` create .venv (everything
# pinned by constraints.txt) when it is missing or out of date, and reuse it otherwise.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test test-fast lint bench docs tpu-api cuda-api xla-ops sweep clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[verify,dev,frameworks]'
	touch $(STAMP)

# Migrate the bundled GPU example into a temporary folder (the diff and the findings),
# then verify it: the original on the CPU with CUDA emulated against the migration on
# CPU PJRT, step by step; a table, a JSON report and a plot of both loss curves.
# DEMO_OUT=folder keeps the results there (default: a new temporary folder).
demo: $(STAMP)
	@set -e; out="$${DEMO_OUT:-$$(mktemp -d)}"; \
	set -x; \
	$(BIN)/xla-migrate --diff --exit-zero fixtures/examples/mnist_cnn.py; \
	$(BIN)/xla-migrate --exit-zero --stats -o "$$out" fixtures/examples/mnist_cnn.py; \
	$(BIN)/xla-migrate verify fixtures/examples/mnist_cnn.py --steps 10 --json "$$out/verify.json" --plot "$$out/loss.png"; \
	set +x; echo "migrated copy: $$out/mnist_cnn.py; verification: $$out/verify.json, $$out/loss.png"

# The whole suite (what CI runs, .ci/run).
test: $(STAMP) lint
	$(BIN)/python -m pytest

# The suite without the tests marked slow (verify's child runs, pre-commit and pip installs,
# the torch sweep sample): under 2 minutes, for the edit-test loop.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow"

# ruff's lint and format checks ([tool.ruff] in pyproject.toml); `ruff check --fix` and
# `ruff format` apply them.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_corpus.py
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_verify.py
	$(BIN)/python benchmarks/bench_tpu_report.py

# docs/rules.md and migrate_xla/generated/rule_index.py (what the pre-filter reads of each rule) are
# generated from the rules (tests/test_docs.py and tests/test_prefilter.py check that they are current),
# migrate_xla/generated/node_builders.py (the fast parse's node builders) from the installed LibCST
# (tests/test_engine_rules.py).
docs: $(STAMP)
	$(BIN)/python -m migrate_xla.generators.docs > docs/rules.md
	$(BIN)/python -m migrate_xla.generators.make_index
	$(BIN)/python -m migrate_xla.generators.make_node_builders

# Regenerates migrate_xla/generated/tpu_api.py (torch_tpu's public names) from the torch_tpu wheel on
# PyPI, downloaded with pip (about 100 MB; nothing is installed). TORCH_TPU=0.3.0 for another release.
TORCH_TPU ?= $(shell sed -n 's/^TORCH_TPU_VERSION = "\(.*\)"/\1/p' migrate_xla/generated/tpu_api.py)
tpu-api: $(STAMP)
	wheels=$$(mktemp -d) && trap 'rm -rf "$$wheels"' EXIT && \
	$(BIN)/python -m pip download torch-tpu==$(TORCH_TPU) --no-deps --only-binary :all: \
		--python-version 3.11 --platform manylinux_2_31_x86_64 -d "$$wheels" && \
	$(BIN)/python -m migrate_xla.generators.make_tpu_api "$$wheels"/torch_tpu-*.whl

# Regenerates migrate_xla/generated/xla_ops.py (what the installed torch_xla can run of the sparse-tensor
# APIs XLA902 handles: its dispatch registrations, the APIs' aten operators) from the installed
# torch and torch_xla (tests/test_xla_ops.py checks that it is current).
xla-ops: $(STAMP)
	$(BIN)/python -m migrate_xla.generators.make_xla_ops

# Regenerates migrate_xla/generated/cuda_api.py (every public name of torch.cuda and what verify's CUDA
# emulation does with each) from the installed torch and the decisions kept in migrate_xla/generators/make_cuda_api.py
# (tests/test_cuda_api.py checks that it is current and that every public name has a decision).
cuda-api: $(STAMP)
	$(BIN)/python -m migrate_xla.generators.make_cuda_api

# Migrate every file of the installed torch and torch_xla packages (safe and unsafe fixes)
# into a temporary folder: no crash, every written file compiles, a second run changes nothing.
sweep: $(STAMP)
	$(BIN)/python benchmarks/sweep.py -j 2

clean:
	rm -rf $(VENV) *.egg-info
