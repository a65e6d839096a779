"""Run every benchmark and print its ratios.

Usage: python -m benchmarks [probe-overhead] [harness-rss] [bindgroup-cache]"""

import sys

from benchmarks import bindgroup_cache, harness_rss, probe_overhead

ALL = {"probe-overhead": probe_overhead.main, "harness-rss": harness_rss.main,
       "bindgroup-cache": bindgroup_cache.main}

names = sys.argv[1:] or list(ALL)
for name in names:
    if name not in ALL:
        print(f"error: unknown benchmark {name!r} (valid: {', '.join(ALL)})", file=sys.stderr)
        sys.exit(2)
for name in names:
    ALL[name]()
