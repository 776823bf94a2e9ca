"""Where fixed texts go: a unified diff, or the files themselves, written in place."""

from __future__ import annotations

import codecs
import difflib
import os
import stat
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
    """Replace the file's content with ``text`` in place, once the re-lint has vouched for it:
    the file keeps its inode, so its owner, mode and hard links stay (a rename would give a
    new file, owned by whoever runs the fix), and its byte-order mark. A read-only file (no
    write permission bit) or one whose content is no longer ``original`` is left alone."""
    real = os.path.realpath(path)  # a link keeps pointing at the fixed file
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
        if not mode & 0o222:
            return InputError(path, f"not fixed: the file is read-only (mode {mode:04o})")
        with open(real, "r+b") as stream:
            data = stream.read()
            if data.decode("utf-8-sig", errors="replace") != original:
                return InputError(path, "not fixed: it changed while it was being linted")
            bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
            stream.seek(0)
            stream.write(bom + text.encode("utf-8"))
            stream.truncate()
            stream.flush()
            os.fsync(stream.fileno())
    except OSError as exc:
        return InputError(path, f"not fixed: cannot write it: {exc.strerror or exc}")
    return None
