"""Which sampled processes are which: the page's content process, the GPU process, and where
per-process samples come from (memory.csv ``process_type``, ``source``)."""

#: Process types that host the page and its worker (where the engine charges bind groups'
#: memory on Apple platforms: the web content process; references.md, WebKit BindGroup.mm).
CONTENT_PROCESS_TYPES = ("renderer", "WebKitWebProcess", "WebContent")
#: Process types of the GPU process (Chromium ``--type=gpu-process``, WebKit's GPU process names).
GPU_PROCESS_TYPES = ("gpu-process", "WebKitGPUProcess", "GPU")
#: Sources of per-process samples taken by the harness: psutil (RSS, USS) and, on macOS,
#: footprint (RSS plus the physical footprint; harness/probe/footprint.py).
PROCESS_SOURCES = ("psutil", "footprint")
