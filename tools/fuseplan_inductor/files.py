"""Reading and writing fuseplan's JSON files (gzip by name on write, by
content on read; writes are atomic)."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from typing import Any


def dump(obj: Any, path: str) -> None:
    """Writes a JSON document atomically (a temporary file in the same
    directory, renamed over PATH), gzip-compressed when PATH ends in .gz."""
    text = json.dumps(obj, separators=(",", ":")).encode()
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp",
                               dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            if path.endswith(".gz"):
                with gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as z:
                    z.write(text)
            else:
                f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def load(path: str) -> Any:
    """Reads a JSON document, gzip-compressed or not (by content)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)
