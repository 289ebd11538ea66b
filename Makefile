# Set-up and everyday commands. `make demo` and `make test` create .venv (everything
# pinned by constraints.txt) when it is missing or out of date, and reuse it otherwise.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_OUT ?= $(shell mktemp -d 2>/dev/null || echo /tmp/xla-migrate-demo)

.PHONY: venv demo test bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[verify,dev]'
	touch $(STAMP)

# Migrate the bundled GPU example into a temporary folder (the diff and the findings),
# then verify it: the original on the CPU with CUDA emulated against the migration on
# CPU PJRT, step by step; a table, a JSON report and a plot of both loss curves.
demo: $(STAMP)
	$(BIN)/xla-migrate --diff --exit-zero fixtures/examples/mnist_cnn.py
	$(BIN)/xla-migrate --exit-zero --stats -o $(DEMO_OUT) fixtures/examples/mnist_cnn.py
	$(BIN)/xla-migrate verify fixtures/examples/mnist_cnn.py --steps 10 --json $(DEMO_OUT)/verify.json --plot $(DEMO_OUT)/loss.png
	@echo "migrated copy: $(DEMO_OUT)/mnist_cnn.py; verification: $(DEMO_OUT)/verify.json, $(DEMO_OUT)/loss.png"

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_corpus.py
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_verify.py

clean:
	rm -rf $(VENV) *.egg-info
