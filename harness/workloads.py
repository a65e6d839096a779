"""Workload discovery: every ``workloads/<name>/manifest.json`` (format: workloads/README.md)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from harness import REPO_ROOT

WORKLOADS_DIR = REPO_ROOT / "workloads"


class Workload(BaseModel):
    """A workload's manifest. ``profiles`` maps a name to model dimensions (numbers)."""

    name: str
    description: str = ""
    entry: str = "main.js"
    variants: dict[str, str]
    default_variants: list[str] = Field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = Field(default_factory=dict)
    default_profile: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)

    @property
    def entry_url(self) -> str:
        return f"/workloads/{self.name}/{self.entry}"

    def variants_to_run(self) -> list[str]:
        return self.default_variants or list(self.variants)


@lru_cache(maxsize=1)
def discover(root: Path = WORKLOADS_DIR) -> dict[str, Workload]:
    """All workloads under ``root`` by name. Raises ``ValueError`` on a malformed manifest."""
    found: dict[str, Workload] = {}
    for manifest in sorted(root.glob("*/manifest.json")):
        try:
            wl = Workload.model_validate(json.loads(manifest.read_text()))
        except Exception as exc:  # pydantic or JSON error: name the file
            raise ValueError(f"{manifest}: {exc}") from exc
        if wl.name != manifest.parent.name:
            raise ValueError(f"{manifest}: name {wl.name!r} differs from its folder")
        found[wl.name] = wl
    return found
