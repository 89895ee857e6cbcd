"""The one atomic file writer of the package: a temporary file beside the target, then a rename.

Every file the package writes whole (reports, tables, figures, exported solvers, caches, sweep parts)
goes through :func:`atomic_write`, so that

- a reader, or a run stopped mid-write, sees the whole previous file or the whole new one, never a
  truncated one (``os.replace`` within one folder is atomic);
- the file gets the permissions any other program would give it: it is created with mode ``0o666``
  and the process's umask applied (0644 under the usual umask 022), unlike ``tempfile.mkstemp``,
  which always makes 0600 files — a solver exported for a colleague or a report on a shared disk
  must be readable by them;
- a temporary left by a crash is recognisable as ours: its name starts with :data:`TEMP_PREFIX`, so
  a cleanup can remove exactly those and nothing a user put in the folder.

It lives in the lowest layer (``symbolic``) because ``numeric`` (code export, caches) and ``verify``
both use it.  A target that is a symbolic link is replaced by the new file (the link is not written
through).
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["TEMP_PREFIX", "atomic_write", "write_text_atomic", "temp_name"]

#: name prefix of every temporary file :func:`atomic_write` creates
TEMP_PREFIX = ".tmp-attnlimits-"


def temp_name(path: Path) -> Path:
    """A fresh temporary name beside ``path`` that keeps its suffix (writers such as ``savefig`` or
    ``to_parquet`` choose the format from it)."""
    path = Path(path)
    return path.with_name(f"{TEMP_PREFIX}{secrets.token_hex(6)}-{path.name}")


def _create(path: Path) -> Path:
    """Create a new empty temporary file beside ``path`` with mode 0666 & ~umask; return its name."""
    for _ in range(100):
        tmp = temp_name(path)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"no free temporary name beside {path}")


def atomic_write(path, write, *, fsync: bool = False, sync_dir: bool = False) -> Path:
    """Call ``write(tmp)`` on a new temporary file ``tmp`` beside ``path``, then rename it over ``path``.

    ``write`` receives the temporary path (a :class:`~pathlib.Path`) and fills it by name (open it for
    writing, ``savefig``, ``to_parquet``...).  The file is created with mode ``0o666`` less the umask.
    ``fsync`` flushes the data to disk before the rename and ``sync_dir`` the folder entry after it
    (power-loss durability).  On any error the temporary is removed and the previous ``path`` is
    left as it was; the error propagates.  Returns ``path``.
    """
    path = Path(path)
    tmp = _create(path)
    try:
        write(tmp)
        if fsync:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if sync_dir:
        fsync_dir(path.parent)
    return path


def write_text_atomic(path, text: str, *, encoding: str = "utf-8", fsync: bool = False) -> Path:
    """:func:`atomic_write` of ``text``."""
    def write(tmp):
        with open(tmp, "w", encoding=encoding) as fh:
            fh.write(text)
    return atomic_write(path, write, fsync=fsync)


def fsync_dir(folder: Path) -> None:
    """Flush the folder entry of ``folder`` to disk, so a rename in it survives a power cut (a no-op where
    the platform or filesystem cannot open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # not supported on this platform or filesystem
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
