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

# Migrate the bundled GPU example into a temporary folder: show the diff and the findings.
demo: $(STAMP)
	$(BIN)/xla-migrate --diff --exit-zero fixtures/examples/mnist_cnn.py
	$(BIN)/xla-migrate --exit-zero --stats -o $(DEMO_OUT) fixtures/examples/mnist_cnn.py
	@echo "migrated copy: $(DEMO_OUT)/mnist_cnn.py"

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_corpus.py
	$(BIN)/python benchmarks/bench_startup.py

clean:
	rm -rf $(VENV) *.egg-info
