"""The ``attnlimits`` command line, built from the result registry.

Results (found through the ``attnlimits.results`` entry-point group, :mod:`attnlimits.symbolic.result`)
contribute their commands: ``attnlimits <result> [<command>] --param ...`` and
``attnlimits export <result> ...``; ``attnlimits verify`` runs the claims of every registered
result.  The tools ``hermite`` and ``weights`` belong to the engine.  Nothing here names a
result: parsers are built from each command's static parameter list, without importing SymPy
or the result's modules, which are imported only when a command runs.

Every subcommand has ``--help`` with an example.  Bad input gives one line on stderr and exit 2.

The package's modules: :mod:`.common` (errors, shared options and checks), :mod:`.output` (tables,
JSON, CSV), :mod:`.commands` (the handlers), :mod:`.parser` (the parser); this module runs them
(:func:`main`, :func:`console_main`; ``python -m attnlimits.verify.cli``).
"""
from __future__ import annotations

import signal
import sys

from .common import CLIError, check_device, check_out_dir
from .output import format_rows
from .parser import build_parser, join_negative_values, leaf_of, leaf_parsers, unknown_option_message

__all__ = ["main", "console_main", "build_parser", "leaf_parsers", "format_rows", "CLIError", "check_device",
           "check_out_dir", "unknown_option_message"]


def main(argv=None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("attnlimits: interrupted", file=sys.stderr)
        return 130


def _leave_no_empty_folder() -> None:
    """An output folder this run created and left empty (it stopped before writing) is removed."""
    if "attnlimits.verify.outputs" in sys.modules:
        from attnlimits.verify.outputs import remove_empty_created

        remove_empty_created()


def _main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, extras = parser.parse_known_args(join_negative_values(argv))
    if extras:
        leaf = leaf_of(parser, args)
        print(leaf.format_usage().rstrip(), file=sys.stderr)
        print(f"{leaf.prog}: error: {unknown_option_message(leaf, extras)}", file=sys.stderr)
        return 2
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from attnlimits.numeric import ConvergenceError
    from attnlimits.numeric.allocator import tune_allocator
    from attnlimits.numeric.threads import apply_threads, resolve_threads
    from attnlimits.symbolic.result import InputError

    tune_allocator()  # freed temporaries reused: the generated kernels 1.5-3x faster (numeric/allocator.py)
    name = args.command + (f" {args.subcommand}" if getattr(args, "subcommand", None) else "")
    try:
        args._threads = apply_threads(resolve_threads(getattr(args, "threads", None)))
        rc = args._handler(args)
        _leave_no_empty_folder()
        return rc
    except KeyboardInterrupt:
        _leave_no_empty_folder()
        print(f"attnlimits {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): nothing to say, the conventional status
        try:
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    except Exception as exc:  # noqa: BLE001 - user-facing errors are one line; others re-raised below
        expected = (CLIError, InputError, ConvergenceError, ValueError, ArithmeticError, OSError, MemoryError)
        try:
            from attnlimits.symbolic.hermite import ActivationError

            expected += (ActivationError,)
        except ImportError:  # pragma: no cover
            pass
        _leave_no_empty_folder()
        if not isinstance(exc, expected):
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if len(msg) > 300:
            msg = msg[:297] + "..."
        print(f"attnlimits {name}: error: {msg}", file=sys.stderr)
        return 2


def _sigint_outside_imports(signum, frame):  # pragma: no cover - exercised by a subprocess test
    """SIGINT handler: KeyboardInterrupt as usual, except while a module is being imported.

    A KeyboardInterrupt raised inside an import can escape an extension module's C++ initialiser
    (pybind11: ``terminate called after throwing … error_already_set``, exit −6) or leave a module
    half-initialised; there the interrupt is re-sent 50 ms later, until the import is done."""
    f = frame
    while f is not None:
        if f.f_code.co_filename.startswith("<frozen importlib"):
            import os
            import threading

            t = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
            t.daemon = True
            t.start()
            return
        f = f.f_back
    raise KeyboardInterrupt


def console_main() -> None:  # pragma: no cover - the `attnlimits` entry point and ``python -m attnlimits``
    """Run :func:`main` and exit with its status.  Ctrl-C during an import is deferred to its end
    (:func:`_sigint_outside_imports`), and after a Ctrl-C the process ends at once with 130
    (``os._exit`` after flushing): the interpreter's shutdown could otherwise re-raise SIGINT."""
    try:
        signal.signal(signal.SIGINT, _sigint_outside_imports)
    except ValueError:  # not the main thread
        pass
    rc = main()
    if rc == 130:
        import os

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed pipe must not hide the exit status
                pass
        os._exit(130)
    sys.exit(rc)
