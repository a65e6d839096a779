"""Physical footprint of a process on macOS: the kernel ledger that jetsam, Activity Monitor's
Memory column, ``footprint(1)`` and ``top``'s MEM use (anonymous dirty memory and its compressed
copies, IOKit/wired memory such as Metal buffers, page tables, non-volatile purgeable memory; not
clean file-backed pages). psutil's RSS undercounts GPU-shared memory on macOS and psutil 7.2
has no footprint, so the harness reads it itself.

:func:`read` calls ``proc_pid_rusage(pid, RUSAGE_INFO_V4, &buf)`` (libproc; allowed for every
process of the same user, no root) and takes ``ri_phys_footprint`` and
``ri_lifetime_max_phys_footprint`` from the struct (xnu ``bsd/sys/resource.h``,
``struct rusage_info_v4``: byte offsets 72 and 240 of 296). Unverified here: it needs macOS.

The text parsers read the same number from Apple's tools (``footprint``, ``vmmap``), for
``doctor``'s cross-check on a Mac; they are pure and tested on real recorded outputs
(tests/drive/mac-recorded/).
"""

from __future__ import annotations

import ctypes
import platform
import re
import struct

#: ``RUSAGE_INFO_V4`` flavor and the offsets of the two fields in ``struct rusage_info_v4``
#: (xnu bsd/sys/resource.h: 16-byte uuid, then uint64 fields; ri_phys_footprint is the 8th,
#: ri_lifetime_max_phys_footprint the 29th).
RUSAGE_INFO_V4 = 4
RUSAGE_V4_SIZE = 296
PHYS_FOOTPRINT_OFFSET = 72
LIFETIME_MAX_OFFSET = 240

#: Unit letters of ``footprint`` (``B``, ``KB``, ``MB``, ``GB`` with a space) and of the
#: ``vmmap``/``leaks`` header (``K``, ``M``, ``G``, no space): powers of 1024, as Apple's
#: memory tools count (the footprint header states its page size, 16384 bytes).
_UNIT = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "M": 2**20, "MB": 2**20, "G": 2**30, "GB": 2**30,
         "T": 2**40, "TB": 2**40}

_libproc = None


def available() -> bool:
    """Whether :func:`read` can work here (macOS with libproc)."""
    return _proc_pid_rusage() is not None


def _proc_pid_rusage():
    global _libproc
    if platform.system() != "Darwin":
        return None
    if _libproc is None:
        try:
            lib = ctypes.CDLL("/usr/lib/libproc.dylib")
            fn = lib.proc_pid_rusage
        except (OSError, AttributeError):
            return None
        fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        _libproc = fn
    return _libproc


def unpack_rusage_v4(buf: bytes) -> tuple[int, int]:
    """``(phys_footprint, lifetime_max_phys_footprint)`` in bytes from a ``rusage_info_v4`` buffer
    (little-endian uint64 fields at :data:`PHYS_FOOTPRINT_OFFSET` and :data:`LIFETIME_MAX_OFFSET`).
    Raises ``ValueError`` on a buffer shorter than :data:`RUSAGE_V4_SIZE`."""
    if len(buf) < RUSAGE_V4_SIZE:
        raise ValueError(f"rusage_info_v4 is {RUSAGE_V4_SIZE} bytes, got {len(buf)}")
    return (struct.unpack_from("<Q", buf, PHYS_FOOTPRINT_OFFSET)[0],
            struct.unpack_from("<Q", buf, LIFETIME_MAX_OFFSET)[0])


def read(pid: int) -> tuple[int, int] | None:
    """``(footprint_bytes, peak_footprint_bytes)`` of ``pid`` now, or None off macOS or when the
    call fails (no such process, another user's process)."""
    fn = _proc_pid_rusage()
    if fn is None:
        return None
    buf = ctypes.create_string_buffer(RUSAGE_V4_SIZE)
    if fn(int(pid), RUSAGE_INFO_V4, buf) != 0:
        return None
    return unpack_rusage_v4(buf.raw)


def parse_size(text: str) -> int:
    """``"142 MB"``, ``"9664 KB"``, ``"0 B"``, ``"253904480 B"``, ``"1.2G"``, ``"2192K"`` → bytes.
    Raises ``ValueError`` on anything else."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]?B?)\s*", text or "")
    if not m or m.group(2) not in _UNIT:
        raise ValueError(f"not a size: {text!r}")
    return int(round(float(m.group(1)) * _UNIT[m.group(2)]))


_FOOTPRINT_HEAD = re.compile(r"^(?P<name>\S.*?) \[(?P<pid>\d+)\]: \d+-bit\s+Footprint: (?P<size>[\d.]+ ?[KMGT]?B)")
_AUX = re.compile(r"^\s*(?P<key>phys_footprint(?:_peak)?): (?P<size>[\d.]+ ?[KMGT]?B)\s*$")


def parse_footprint(text: str) -> list[dict]:
    """Processes in ``footprint`` output: one dict per ``NAME [PID]: 64-bit  Footprint: SIZE``
    header with ``name``, ``pid``, ``footprint_bytes`` and, when its ``Auxiliary data`` block
    is shown, ``phys_footprint_bytes`` and ``peak_bytes`` (``phys_footprint_peak``)."""
    out: list[dict] = []
    for line in text.splitlines():
        m = _FOOTPRINT_HEAD.match(line)
        if m:
            out.append({"name": m["name"], "pid": int(m["pid"]), "footprint_bytes": parse_size(m["size"])})
            continue
        a = _AUX.match(line)
        if a and out:
            key = "peak_bytes" if a["key"].endswith("_peak") else "phys_footprint_bytes"
            out[-1][key] = parse_size(a["size"])
    return out


def parse_vmmap_header(text: str) -> dict:
    """The header of ``vmmap``/``leaks``/``sample`` output: ``name``, ``pid`` (``Process:``),
    ``footprint_bytes`` (``Physical footprint:``) and ``peak_bytes`` (``Physical footprint
    (peak):``); keys absent when their line is."""
    out: dict = {}
    for line in text.splitlines():
        m = re.match(r"^Process:\s+(?P<name>.+?) \[(?P<pid>\d+)\]\s*$", line)
        if m:
            out.update(name=m["name"], pid=int(m["pid"]))
        m = re.match(r"^Physical footprint( \(peak\))?:\s+(?P<size>[\d.]+[KMGT]?)\s*$", line)
        if m:
            out["peak_bytes" if m.group(1) else "footprint_bytes"] = parse_size(m["size"])
    return out
