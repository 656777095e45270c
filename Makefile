# zonemark: two entry points on a fresh machine, `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/zonemark check examples/layer
	$(BIN)/zonemark outline 'examples/layer/cars[ext_memory].md'
	$(BIN)/zonemark status examples/layer
	mkdir -p out
	$(BIN)/zonemark graph examples/layer --format html -o out/layer-graph.html
	@echo "graph page written to out/layer-graph.html (open it in a browser; it works offline)"

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

bench: $(STAMP)
	$(BIN)/python bench/bench_parse.py
	$(BIN)/python bench/bench_layer.py
	$(BIN)/python bench/bench_append.py
	$(BIN)/python bench/bench_search.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
