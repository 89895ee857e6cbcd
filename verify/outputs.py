"""Output files of the commands: checked before any work, written atomically, never harming a user's files.

A command that writes a file (a figure, a report) checks the path *before* it computes — its
folder exists and is writable, its suffix is one it can write — so that a bad path is one line
and exit 2 instead of a finished computation thrown away; and it writes the file to a temporary
name in the same folder, then replaces the target (:func:`attnlimits.symbolic.files.atomic_write`:
a write failing partway leaves the previous file intact, and the file honours the umask).

A command that writes into an output *folder* (``verify``, ``explore``, ``figure``, ``sweep``):

- checks it with :func:`check_output_folder` before any work: created if missing, a real write
  probed (root passes ``os.access`` everywhere), each subfolder it will write in a folder inside
  it — a subfolder that is a link to somewhere outside is refused, nothing is written through it;
- holds :class:`OutputLock` (``DIR/.attnlimits-lock``: pid, host, start time, command) for the
  run, so that a second run into the same folder refuses at once, naming the first; a lock whose
  process no longer exists on this host is taken over, with a line saying so;
- records the files it wrote in ``DIR/.attnlimits-manifest.json`` (per command), and removes a
  file only when that manifest lists it from an earlier run of the same command
  (:func:`remove_previous`) — never a file the user put there — and says what it removed.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import sys
from pathlib import Path

from attnlimits.symbolic.files import TEMP_PREFIX, atomic_write
from attnlimits.symbolic.result import InputError

__all__ = ["check_output_file", "check_output_folder", "save_figure", "write_text", "OutputLock",
           "read_manifest", "record_files", "remove_previous", "write_atomically", "MANIFEST", "LOCK"]

#: the file in an output folder listing, per command, the files its last run wrote there
MANIFEST = ".attnlimits-manifest.json"
#: the lock file of an output folder while a run writes into it
LOCK = ".attnlimits-lock"


def _probe(folder: Path) -> None:
    """Create and remove a file in ``folder`` (the only reliable test: root passes ``os.access``
    everywhere, a read-only mount or /proc refuses new files); ``OSError`` when it cannot."""
    probe = folder / f"{TEMP_PREFIX}probe-{os.getpid()}"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    os.unlink(probe)


def check_output_file(path, *, option: str = "--plot", suffixes=(".png",)) -> Path:
    """Refuse (:class:`InputError`, one line) a file path that cannot be written: a folder that
    does not exist or is not writable, an existing folder in its place, or a suffix not in
    ``suffixes``."""
    text = str(path).strip()
    if not text:
        raise InputError(f"{option} must name a file")
    p = Path(text)
    if suffixes and p.suffix.lower() not in suffixes:
        raise InputError(f"{option} {text}: the file must end in {' or '.join(suffixes)}")
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise InputError(f"{option} {text} is a folder")
    if not parent.is_dir():
        raise InputError(f"{option} {text}: the folder {parent} does not exist")
    try:
        _probe(parent)
    except OSError as exc:
        raise InputError(f"{option} {text}: cannot write in {parent} ({exc.strerror or exc})") from None
    return p


def _inside(root: Path, path: Path) -> bool:
    real = path.resolve()
    return real == root or root in real.parents


#: Folders :func:`check_output_folder` created in this process, parents first (see :func:`remove_empty_created`).
_CREATED: list = []


def _missing_chain(path: Path) -> list:
    """``path`` and its ancestors that do not exist yet, outermost first."""
    chain, p = [], Path(path)
    while not (p.exists() or p.is_symlink()) and p != p.parent:
        chain.append(p)
        p = p.parent
    return chain[::-1]


def remove_empty_created() -> list:
    """Remove the folders :func:`check_output_folder` created in this process that are still empty,
    innermost first, and return them: a command refused or failed after its output check (a
    checkpoint that does not read, an unknown claim) leaves no empty folder behind.  Only an empty
    folder is removed (``rmdir``); one with any file in it is kept."""
    removed = []
    for p in reversed(_CREATED):
        try:
            p.rmdir()
            removed.append(p)
        except OSError:
            pass
    _CREATED.clear()
    return removed


def check_output_folder(path, *, option: str = "--out", subdirs=(), files=(), create_subdirs=False) -> Path:
    """Check the output folder ``path`` before any work: refuse (:class:`InputError`, one line naming
    ``option``) an empty name, a file in its place, a folder that cannot be created or written, a
    subfolder in ``subdirs`` (relative names) that is not a folder or is a link out of ``path``,
    and a planned file in ``files`` (relative names) that is a folder.  Creates the folder (and the
    subfolders with ``create_subdirs``); returns it as a :class:`~pathlib.Path`."""
    if path is None or not str(path).strip():
        raise InputError(f"{option} must name a folder")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"{option} {path} exists and is not a folder")
    new = _missing_chain(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot create the folder ({exc.strerror or exc})") from None
    _CREATED.extend(new)
    try:
        _probe(out)
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write in the folder ({exc.strerror or exc})") from None
    root = out.resolve()
    for rel in subdirs:
        sub = out / rel
        if (sub.is_symlink() or sub.exists()) and not _inside(root, sub):
            raise InputError(f"{option} {path}: {rel} is a link to {sub.resolve()}, outside the folder; nothing is "
                             f"written through it (remove the link or choose another folder)")
        if sub.exists() and not sub.is_dir():
            raise InputError(f"{option} {path}: {rel} exists and is not a folder")
        if sub.is_dir() or create_subdirs:
            try:
                new = _missing_chain(sub)
                sub.mkdir(parents=True, exist_ok=True)
                _CREATED.extend(new)
                _probe(sub)
            except OSError as exc:
                raise InputError(f"{option} {path}: cannot write in {rel} ({exc.strerror or exc})") from None
    for rel in files:
        f = out / rel
        if f.is_dir() and not f.is_symlink():
            raise InputError(f"{option} {path}: {rel} is a folder; the run writes a file there")
        if not _inside(root, f.parent):
            raise InputError(f"{option} {path}: {Path(rel).parent} is a link to {f.parent.resolve()}, outside the "
                             f"folder; nothing is written through it (remove the link or choose another folder)")
    return out


def write_atomically(path: Path, write) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path`` and rename it to ``path``: a failed write leaves
    the previous file."""
    return atomic_write(Path(path), write)


def save_figure(fig, path, **kw) -> Path:
    """``fig.savefig`` to a temporary file beside ``path``, then replace ``path``."""
    return write_atomically(Path(path), lambda tmp: fig.savefig(tmp, **kw))


def write_text(path, text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path``, then replace ``path``."""
    return write_atomically(Path(path), lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# the lock of an output folder
# ---------------------------------------------------------------------------------------------
def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _pid_alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError, TypeError):
        return True  # exists under another user (or not a pid we can test): assume it runs
    except OSError:
        return True
    return True


#: lock files held by this process (resolved paths): a second lock on one folder in one process refuses too
_HELD: set = set()


class OutputLock:
    """The lock of an output folder while one run writes into it: ``DIR/.attnlimits-lock``, created
    exclusively (``O_CREAT | O_EXCL``) with the holder's pid, host, start time and command, removed
    when the run ends (also on error or Ctrl-C).

    A second run refuses at once (:class:`InputError`, one line naming the holder).  A lock left by
    a run that died — its pid no longer exists on this host — is taken over, with a line on stderr
    saying so; a lock from another host is never taken over (delete the file when that run is gone).

    >>> with OutputLock("out", "attnlimits verify"):   # doctest: +SKIP
    ...     ...
    """

    def __init__(self, out, command: str, *, option: str = "--out", stream=None):
        self.out = Path(out)
        self.path = self.out / LOCK
        self.command = str(command)
        self.option = option
        self.stream = stream
        self.held = False

    def _read(self) -> tuple[str, dict]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return "", {}
        except OSError:
            return "", {"unreadable": True}
        try:
            info = json.loads(text)
        except ValueError:
            info = {}
        return text, info if isinstance(info, dict) else {}

    def acquire(self) -> "OutputLock":
        import time

        me = {"pid": os.getpid(), "host": socket.gethostname(), "started": _now(), "command": self.command}
        key = str(self.path.resolve())
        if key in _HELD:
            raise InputError(f"{self.option} {self.out} is already being written by this process")
        for attempt in range(50):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                text, other = self._read()
                if not text and attempt < 49:  # removed meanwhile, or its writer is mid-write: look again
                    time.sleep(0.02)
                    continue
                pid, host = other.get("pid"), other.get("host")
                ours = host == me["host"] and isinstance(pid, int) and pid > 0
                if ours and (not _pid_alive(pid) or pid == me["pid"]):
                    if self._read()[0] == text:  # still the same stale lock: take it over
                        try:
                            self.path.unlink()
                        except FileNotFoundError:
                            pass
                        print(f"attnlimits: {self.out}: taking over the lock of an earlier run that is gone "
                              f"(pid {pid} on {host}, started {other.get('started', '?')}, "
                              f"{other.get('command', '?')})", file=self.stream or sys.stderr, flush=True)
                    continue
                cmd = str(other.get("command", "an attnlimits run"))
                cmd = cmd if len(cmd) <= 60 else cmd[:57] + "..."
                who = f"{cmd} (pid {pid} on {host}, started {other.get('started', '?')})" if other else "another run"
                raise InputError(f"{self.option} {self.out} is in use by {who}; wait for it to end or choose "
                                 f"another folder (if that run is gone, delete {LOCK} there)") from None
            except OSError as exc:
                raise InputError(f"{self.option} {self.out}: cannot create the lock {self.path.name} "
                                 f"({exc.strerror or exc})") from None
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(me) + "\n")
            self.held = True
            _HELD.add(key)
            return self
        raise InputError(f"{self.option} {self.out}: could not take the lock {self.path}")

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        _HELD.discard(str(self.path.resolve()))
        _, info = self._read()
        if info.get("pid") == os.getpid():
            try:
                self.path.unlink()
            except OSError:
                pass

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
        return False


# ---------------------------------------------------------------------------------------------
# the manifest: what each command wrote into a folder
# ---------------------------------------------------------------------------------------------
def read_manifest(out) -> dict:
    """``DIR/.attnlimits-manifest.json`` as ``{command: {"files": [...], "written": ISO time}}``
    (empty when missing or unreadable: then nothing counts as written by an earlier run)."""
    try:
        doc = json.loads((Path(out) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    cmds = doc.get("commands") if isinstance(doc, dict) else None
    return cmds if isinstance(cmds, dict) else {}


def _listed(out, command: str) -> list[str]:
    entry = read_manifest(out).get(command) or {}
    files = entry.get("files") if isinstance(entry, dict) else None
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []


def _relative(out: Path, f) -> str:
    try:
        return str(Path(f).relative_to(out))
    except ValueError:
        return str(Path(f))


def record_files(out, command: str, files, *, merge: bool = False) -> None:
    """Record ``files`` (paths relative to ``out``) as written by ``command`` in ``out``'s manifest;
    ``merge`` adds them to those an earlier run of the command recorded (that are still there)."""
    out = Path(out)
    rel = [_relative(out, f) for f in files]
    if merge:
        rel = [f for f in _listed(out, command) if (out / f).is_file()] + rel
    cmds = read_manifest(out)
    cmds[command] = {"files": sorted(dict.fromkeys(rel)), "written": _now()}
    doc = {"about": "files written here by attnlimits, per command; a later run of a command removes only files "
                    "listed under it", "commands": cmds}
    write_text(out / MANIFEST, json.dumps(doc, indent=1) + "\n")


def remove_previous(out, command: str, keep, *, under: str = "", stream=None) -> list[str]:
    """Remove the files an earlier run of ``command`` wrote in ``out`` (its manifest entry) that are
    not in ``keep`` (relative paths) and lie under the subfolder ``under``; return their relative
    paths, named in one line on ``stream`` (stderr).  Never removes a file the manifest does not list,
    a path that is not a regular file (a link, a folder), or one reached through a link out of ``out``."""
    out = Path(out)
    root = out.resolve()
    keep = {str(Path(k)) for k in keep}
    removed = []
    for rel in _listed(out, command):
        p = Path(rel)
        if p.is_absolute() or ".." in p.parts or str(p) in keep:
            continue
        if under and (not p.parts or p.parts[0] != under):
            continue
        target = out / p
        if target.is_symlink() or not target.is_file() or not _inside(root, target.parent):
            continue
        try:
            target.unlink()
        except OSError:
            continue
        removed.append(str(p))
    if removed:
        print(f"attnlimits: removed {len(removed)} file(s) an earlier run of {command} wrote in {out}: "
              + ", ".join(removed), file=stream or sys.stderr, flush=True)
    return removed


def plain_log_ticks(fig) -> None:
    """Plain tick labels on every log axis of ``fig``: 0.1, 0.2, 0.5, 1 (one per decade when wide),
    no minor labels — instead of matplotlib's overlapping 10^k mathtext."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for a in fig.axes:
        for axis, scale, lim in ((a.xaxis, a.get_xscale(), a.get_xlim()), (a.yaxis, a.get_yscale(), a.get_ylim())):
            if scale == "log" and lim[0] > 0:
                subs = (1.0,) if math.log10(lim[1] / lim[0]) > 3 else (1.0, 2.0, 5.0)
                axis.set_major_locator(LogLocator(base=10, subs=subs))
                axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                axis.set_minor_formatter(NullFormatter())

