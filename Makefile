# Set-up and everyday commands. `make demo` and `make test` create .venv (everything
# pinned by constraints.txt) when it is missing or out of date, and reuse it otherwise.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test bench docs sweep clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[verify,dev]'
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

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_corpus.py
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_verify.py

# docs/rules.md is generated from the rules (tests/test_docs.py checks that it is current).
docs: $(STAMP)
	$(BIN)/python -m migrate_xla.docs > docs/rules.md

# Migrate every file of the installed torch and torch_xla packages (safe and unsafe fixes)
# into a temporary folder: no crash, every written file compiles, a second run changes nothing.
sweep: $(STAMP)
	$(BIN)/python benchmarks/sweep.py -j 2

clean:
	rm -rf $(VENV) *.egg-info
