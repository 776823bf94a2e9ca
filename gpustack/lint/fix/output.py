"""Where fixed texts go: a unified diff, or the files themselves, written atomically."""

from __future__ import annotations

import codecs
import contextlib
import difflib
import os
import stat
import tempfile
from collections.abc import Mapping

from gpustack.lint.model import InputError


def unified_diff(originals: Mapping[str, str], fixed: Mapping[str, str]) -> str:
    """One unified diff of every fixed file (``a/FILE``, ``b/FILE`` as ``git apply`` takes)."""
    parts: list[str] = []
    for file, text in fixed.items():
        before, after = (file, file) if os.path.isabs(file) else (f"a/{file}", f"b/{file}")
        for line in difflib.unified_diff(_lines(originals[file]), _lines(text), before, after):
            parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(parts)


def _lines(text: str) -> list[str]:
    """Lines split at line feeds only (``str.splitlines`` also splits at U+2028 and friends)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def write_file(path: str, original: str, text: str) -> InputError | None:
    """Replace the file's content with ``text``: through a temporary file in the same folder
    and ``os.replace``, keeping its mode and byte-order mark, never half-written. A file whose
    content is no longer ``original`` is left alone."""
    real = os.path.realpath(path)  # a link keeps pointing at the fixed file
    try:
        with open(real, "rb") as stream:
            data = stream.read()
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except OSError as exc:
        return InputError(path, f"not fixed: cannot read it again: {exc.strerror}")
    if data.decode("utf-8-sig", errors="replace") != original:
        return InputError(path, "not fixed: it changed while it was being linted")
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(real), prefix=f".{os.path.basename(real)}.")
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(bom + text.encode("utf-8"))
        os.chmod(temporary, mode)
        os.replace(temporary, real)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return InputError(path, f"not fixed: cannot write it: {exc.strerror}")
    return None
