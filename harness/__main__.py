"""``python -m harness`` is ``webgpu-harness``."""

from harness.cli import app

app(prog_name="webgpu-harness")
