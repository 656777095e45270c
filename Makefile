# zonemark: two entry points on a fresh machine, `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test chromium bench venv clean

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

# Lint first (ruff, `[tool.ruff]`), then static types (mypy over src/zonemark, configured in pyproject.toml),
# then the whole suite (slow tests included; `-m "not slow"` leaves them out when run by hand).
test: $(STAMP) chromium
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n 2

# The browser tests need a Chromium. Installed here, never by a test: with apt-get when we are
# root; otherwise (or if the install fails) a note, and those tests are skipped with the reason.
CHROMIUM_NAMES := chromium chromium-browser google-chrome google-chrome-stable
chromium:
	@for name in $(CHROMIUM_NAMES); do command -v $$name >/dev/null 2>&1 && exit 0; done; \
	if [ -n "$$ZONEMARK_CHROMIUM" ]; then exit 0; fi; \
	if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium for the browser tests (apt-get)"; \
		if DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null && \
		   DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then exit 0; fi; \
		echo "note: apt-get could not install chromium: the browser tests will be skipped"; \
	else \
		echo "note: no chromium on PATH (and no root apt-get to install it): the browser tests will be skipped"; \
	fi

bench: $(STAMP)
	$(BIN)/python bench/bench_parse.py
	$(BIN)/python bench/bench_layer.py
	$(BIN)/python bench/bench_append.py
	$(BIN)/python bench/bench_lsp.py
	$(BIN)/python bench/bench_search.py
	$(BIN)/python bench/bench_mcp.py
	$(BIN)/python bench/bench_worst_case.py
	$(BIN)/python bench/bench_merge.py
	$(BIN)/python bench/bench_import.py
	$(BIN)/python bench/bench_review.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache
