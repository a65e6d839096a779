# The two set-up commands of README.md: `make run` and `make test`. Both install what is
# missing first (scripts/setup.sh), so they work on a fresh Debian machine.
.PHONY: run test setup bench

setup:
	./scripts/setup.sh

run: setup
	.venv/bin/webgpu-harness run

test: setup
	.venv/bin/python -m pytest

bench: setup
	.venv/bin/python -m benchmarks
