"""Run every benchmark and print its ratios.

Usage: python -m benchmarks [probe-overhead] [harness-rss] [bind-group-cache] [report-size] [report-time] [soak]
[app-overhead] [aa-significance] [bad-input] [delivery]"""

import sys

from benchmarks import (aa_significance, app_overhead, bad_input, bind_group_cache, delivery, harness_rss,
                        probe_overhead, report_size, report_time, soak)

ALL = {"probe-overhead": probe_overhead.main, "harness-rss": harness_rss.main,
       "bind-group-cache": bind_group_cache.main, "report-size": report_size.main, "soak": soak.main,
       "app-overhead": app_overhead.main, "report-time": report_time.main, "aa-significance": aa_significance.main,
       "bad-input": bad_input.main, "delivery": delivery.main}

names = sys.argv[1:] or list(ALL)
for name in names:
    if name not in ALL:
        print(f"error: unknown benchmark {name!r} (valid: {', '.join(ALL)})", file=sys.stderr)
        sys.exit(2)
for name in names:
    ALL[name]()
