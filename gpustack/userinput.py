"""What gpustack accepts in a file a user hands it (manifests for lint, specs for validate and
render): its size, its encoding and how far its aliases may expand. Lint and the spec loader share these limits, so the same
file is refused by both for the same reason, with the same words.
"""

from __future__ import annotations

import codecs

MAX_FILE_BYTES = 32 * 1024 * 1024
# A spec describes node pools, not nodes: 1,000 pools with labels, taints and drivers are
# 270 KB. ruamel.yaml, which keeps the positions error messages point at, reads about 0.3 MB
# a second (pure Python): the cap keeps the slowest spec read to seconds.
MAX_SPEC_BYTES = 1024 * 1024
MAX_ALIAS_NODES = 100_000  # nodes that aliases may add to one document (billion laughs)
ALIAS_BOMB = f"aliases expand to more than {MAX_ALIAS_NODES} nodes (a YAML alias bomb?): not read"
_UTF16_OR_32 = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class Unreadable(Exception):
    """Why a file's bytes are not text gpustack reads, and the line where that shows, if any."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def decode(data: bytes, limit: int | None = None) -> str:
    """The text of a file's bytes (UTF-8, with or without a byte-order mark), or ``Unreadable``.

    Read at most ``limit + 1`` bytes (default ``MAX_FILE_BYTES``): more is refused without
    decoding anything.
    """
    limit = MAX_FILE_BYTES if limit is None else limit
    if len(data) > limit:
        raise Unreadable(f"larger than {limit >> 20} MiB: not read")
    if data.startswith(_UTF16_OR_32):
        raise Unreadable("UTF-16 or UTF-32 text (byte-order mark): not read; save it as UTF-8", 1)
    if b"\0" in data[:8192]:
        raise Unreadable("binary file (holds NUL bytes): not read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise Unreadable(f"not UTF-8 (byte 0x{data[exc.start]:02x})", line) from None
