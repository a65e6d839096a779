# The two set-up commands of README.md: `make run` and `make test`. Both install what is
# missing first (scripts/setup.sh: .venv, then `webgpu-harness setup`), so they work on a fresh
# Debian machine. `make wheel` builds the sdist and wheel into dist/. Each phase prints its own
# lines, in order (setup: … then the command's), and `make run` ends with the run's "done: …".
.PHONY: run test test-full setup setup-tests bench wheel

setup:
	@./scripts/setup.sh

run: setup
	@echo "run: webgpu-harness run (the default suite on every installed browser)"
	@.venv/bin/webgpu-harness run

# what only the tests need: chromium-driver, Java 17+, the Selenium Grid jar
setup-tests: setup
	@./scripts/setup-tests.sh

test: setup-tests
	.venv/bin/python -m pytest -m "not full"

test-full: setup-tests
	.venv/bin/python -m pytest -m full

bench: setup
	.venv/bin/python -m benchmarks

wheel: setup
	.venv/bin/python -m build --outdir dist .
