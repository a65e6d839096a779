"""``python -m harness`` is ``webgpu-harness`` (harness/entry.py: Ctrl-C at any moment is one line)."""

from harness.entry import main

main()
