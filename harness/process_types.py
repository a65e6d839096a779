"""Which sampled processes are which: the page's content process, the GPU process, and where
per-process samples come from (memory.csv ``process_type``, ``source``)."""

#: Process types that host the page and its worker (where the engine charges bind groups'
#: memory on Apple platforms: the web content process; references.md, WebKit BindGroup.mm).
#: ``node``: the Node process of a native Dawn cell (harness/drive/dawn.py), which runs the worker
#: code and Dawn itself, so holds what a browser's content process would.
CONTENT_PROCESS_TYPES = ("renderer", "WebKitWebProcess", "WebContent", "node")
#: Process types of the GPU process (Chromium ``--type=gpu-process``, WebKit's GPU process names).
GPU_PROCESS_TYPES = ("gpu-process", "WebKitGPUProcess", "GPU")
#: Sources of per-process samples taken by the harness: psutil (RSS, USS) and, on macOS,
#: footprint (RSS plus the physical footprint; harness/probe/footprint.py).
PROCESS_SOURCES = ("psutil", "footprint")


def processes_of(ptype: str) -> str:
    """The processes of one type as a sentence names them: ``all renderer processes``, ``every
    gpu-process`` (Chromium's type names its processes already: not "gpu-process processes")."""
    return f"every {ptype}" if ptype.endswith("process") else f"all {ptype} processes"


def content_notes(memory) -> list[str]:
    """One line per cell whose per-process samples (memory.csv rows of :data:`PROCESS_SOURCES`)
    lack the content process in some sampling rounds (a round: the samples of one ``time_s``):
    ``content process not sampled`` when no round has one, else how many rounds had one. Where
    it is missing, every process's RSS (``peak_rss_bytes_all``, ``rss_growth_bytes_per_token_all``;
    harness/stats/cells.py) is not stated for that round: a sum without the page's process would
    read as a smaller, complete one. ``memory``: memory.csv as a pandas DataFrame."""
    if not len(memory) or "process_type" not in memory:
        return []
    m = memory[memory["source"].isin(PROCESS_SOURCES) & memory["rss_bytes"].notna() & (memory["rss_bytes"] > 0)]
    out = []
    for cell, rows in m.groupby("cell", sort=False):
        rounds = rows.assign(content=rows["process_type"].isin(CONTENT_PROCESS_TYPES)).groupby("time_s")["content"].any()
        have, n = int(rounds.sum()), len(rounds)
        if have == 0:
            out.append(f"⚠ `{cell}`: content process not sampled (no {' / '.join(CONTENT_PROCESS_TYPES)} RSS in its "
                       f"{n} sampling rounds): its content-process RSS, any memory-budget verdict and every-process RSS "
                       "(peak_rss_bytes_all, rss_growth_bytes_per_token_all) are not stated")
        elif have < n:
            out.append(f"`{cell}`: content process sampled in {have} of {n} sampling rounds: every-process RSS "
                       f"(peak_rss_bytes_all, rss_growth_bytes_per_token_all) from those {have} only")
    return out


def shared_content_notes(memory) -> list[str]:
    """One line per cell whose content process (memory.csv psutil/footprint rows of
    :data:`CONTENT_PROCESS_TYPES`, by ``pid``) is one an earlier cell of the run was sampled in:
    WebKitGTK's WebDriver keeps one WebKitWebProcess for a session's pages, so a later cell's
    content RSS, its memory-budget reading and its RSS growth start from what the earlier cells
    left there (the statement checker: reuse's RSS before its first step was above fresh's peak).
    Cells in memory.csv's order (the run's); ``memory``: memory.csv as a pandas DataFrame."""
    if not len(memory) or not {"process_type", "pid", "cell"} <= set(memory.columns):
        return []
    m = memory[memory["source"].isin(PROCESS_SOURCES) & memory["process_type"].isin(CONTENT_PROCESS_TYPES)
               & memory["pid"].notna()]
    first: dict[int, str] = {}  # pid → the first cell sampled in it
    out = []
    for cell, rows in m.groupby("cell", sort=False):
        shared: dict[int, tuple[str, str]] = {}
        for pid, ptype in rows[["pid", "process_type"]].drop_duplicates("pid").itertuples(index=False):
            owner = first.setdefault(int(pid), cell)
            if owner != cell:
                shared[int(pid)] = (str(ptype), owner)
        if shared:
            types = " / ".join(dict.fromkeys(t for t, _ in shared.values()))
            owners = ", ".join(f"`{o}`" for o in dict.fromkeys(o for _, o in shared.values()))
            pids = ", ".join(map(str, shared))
            out.append(f"⚠ `{cell}`: its content process{'es' if len(shared) > 1 else ''} ({types}, "
                       f"pid{'s' if len(shared) > 1 else ''} {pids}) {'are those' if len(shared) > 1 else 'is the one'} "
                       f"{owners} ran in before it: its content-process RSS, memory-budget reading and RSS growth "
                       "include what earlier cells left there")
    return out
