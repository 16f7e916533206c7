# Two entry points: `make play` (terminal quiz) and `make test` (the whole check).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# quizbot alone (what play needs), then quizbot with the test tools.
PLAY_STAMP := $(VENV)/.play-installed
STAMP := $(VENV)/.installed
# Every dependency at the version and hashes in the lock (docs/deploy.md#the-lock-files);
# quizbot itself is installed on top without its dependencies, and pip check says if the
# lock has fallen behind pyproject.toml.
LOCK := requirements/runtime.txt
TEST_LOCK := requirements/test.txt
UV := $(VENV)/bin/uv

.PHONY: play test lint typecheck pytest bank audit lock bench clean

$(PLAY_STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m pip check || { echo "the lock is behind pyproject.toml: run make lock"; exit 1; }
	touch $(PLAY_STAMP)

$(STAMP): $(PLAY_STAMP) $(TEST_LOCK)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(TEST_LOCK)
	$(BIN)/python -m pip check || { echo "the lock is behind pyproject.toml: run make lock"; exit 1; }
	touch $(STAMP)

play: $(PLAY_STAMP)
	$(BIN)/quizbot play $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check bot tests benchmarks deploy
	$(BIN)/ruff format --check bot tests benchmarks deploy

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q -rs $(PYTEST_ARGS)

# The shipped bank's teaching-quality lint: exit 1 past a bank-wide limit (docs/writing-questions.md).
bank: $(STAMP)
	$(BIN)/quizbot validate --lint questions

# The locked dependencies against the advisory databases: fails on a known vulnerability, says
# so (and passes) when no database can be reached.
audit: $(STAMP)
	$(BIN)/python deploy/audit.py $(LOCK) $(TEST_LOCK)

test: lint typecheck bank audit pytest

# Resolve pyproject.toml again into the two locks (for every platform, Python 3.11 and later).
# uv only resolves; nothing it writes depends on where it runs.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(UV) || $(BIN)/python -m pip install --quiet 'uv>=0.9'
	$(UV) pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	    --output-file $(LOCK) pyproject.toml
	$(UV) pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	    --extra test --output-file $(TEST_LOCK) pyproject.toml

bench: $(STAMP)
	for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
