"""Native (outside the browser) baseline of the dispatch-overhead methods, on wgpu-native.

``bench.py`` (the methods), ``run.py`` (cells → samples) and ``runfolder.py`` (manifest +
samples.jsonl) need only wgpu, numpy and the standard library, so ``benchmarks/native_gpu.py``
can run them on a GPU machine; ``cli.py`` adds ``webgpu-harness native`` (typer, tables, report).
``dawn.py`` runs ``--browser dawn`` cells (native Dawn in Node) with no run server, the host
appending to ``samples.jsonl`` (``benchmarks/dawn_gpu.py``: standard library only).
"""
