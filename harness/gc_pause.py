"""Python's cyclic garbage collector held off while a run folder is analysed.

Reading a run makes one dict per sample and more per nested object (a 16-cell × 5,000-token run:
100,000 samples, a few million dicts, lists and tuples) and keeps them all. CPython's collector
starts a collection after every ~700 new container objects and, now and then, walks every
tracked object of the process (the ``gc`` module's documentation, "threshold"), so building the
tables of such a run spent about as long in the collector as in the work itself. Almost none of
it is cyclic garbage (about 26,000 objects for that run), so :func:`paused` turns the collector
off for the analysis; reference counting still frees everything else as it goes, and the
collector runs again as usual afterwards (benchmarks/report_time.py measures the difference).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
#: how many :func:`paused` blocks are open, and whether this module turned the collector off
#: (still True after a block whose end was interrupted before it turned it on again: the next
#: block's end does)
_open = 0
_ours = False


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Turn the cyclic collector off inside the block (nested or from several threads: it is on
    again once the last block ends, if it was on before the first began). Raises nothing of its
    own. An interrupt (Ctrl-C) at any point leaves it off at worst until the next block ends."""
    global _open, _ours
    entered = False
    try:
        with _lock:
            if _open == 0 and (gc.isenabled() or _ours):
                gc.disable()
                _ours = True
            entered = True
            _open += 1
        yield
    finally:
        if entered:
            with _lock:
                _open = max(_open - 1, 0)
                if _open == 0 and _ours:
                    gc.enable()
                    _ours = False
