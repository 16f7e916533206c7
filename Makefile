# Two entry points: `make play` (terminal quiz) and `make test` (the whole check).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# quizbot alone (what play needs), then quizbot with the test tools.
PLAY_STAMP := $(VENV)/.play-installed
STAMP := $(VENV)/.installed

.PHONY: play test lint typecheck pytest bank bench clean

$(PLAY_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(PLAY_STAMP)

$(STAMP): $(PLAY_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

play: $(PLAY_STAMP)
	$(BIN)/quizbot play $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check bot tests benchmarks
	$(BIN)/ruff format --check bot tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q -rs $(PYTEST_ARGS)

# The shipped bank's teaching-quality lint: exit 1 past a bank-wide limit (docs/writing-questions.md).
bank: $(STAMP)
	$(BIN)/quizbot validate --lint questions

test: lint typecheck bank pytest

bench: $(STAMP)
	for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
