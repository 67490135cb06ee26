# Two commands do everything on a fresh Debian/Ubuntu machine:
#   make demo   — set up, then generate a game from a brief with the embedded defaults
#   make test   — set up, then lint (ruff, import checks, mypy) + the whole test suite
#   make test-fast — the pure units only (no redis-server, Chromium, processes, slow or e2e tests), no lint
BRIEF ?= a potion shop tycoon where I brew potions from herbs and sell them to adventurers
VENV := .venv/bin
# pytest-xdist workers: 2 on the reference 2-core machine (each worker drives at most one live Phaser validation)
TEST_WORKERS ?= 2
# byte-compiled modules are kept (__pycache__/, git-ignored) even where the environment turns that off: without them
# every pytest worker recompiles tier2 and re-rewrites every test module's asserts at collection (8 s instead of 4 s)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo test test-fast lint serve bench bench-onion clean
setup:
	@scripts/setup.sh

demo: setup
	$(VENV)/tier2 generate "$(BRIEF)"

lint: setup
	$(VENV)/ruff check tier2 tests bench ci capability_packs evals
	$(VENV)/python ci/check_imports.py
	$(VENV)/python ci/check_forbidden_imports.py
	$(VENV)/mypy

# pytest exits 5 when it collected no tests: like any other non-zero exit it fails make (and .ci/run)
test: lint
	$(VENV)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal

# the inner loop: every test with none of the markers redis, browser, slow, e2e (tests/README.md); under a minute
test-fast: setup
	$(VENV)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not redis and not browser and not slow and not e2e"

serve: setup
	$(VENV)/tier2 serve

bench: setup
	$(VENV)/python bench/generate.py

bench-onion: setup
	$(VENV)/python bench/onion_overhead.py --breakdown

clean:
	rm -rf workspaces/projects workspaces/.redis
