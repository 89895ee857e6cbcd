"""``python -m attnlimits ARGS`` is ``attnlimits ARGS``."""
from attnlimits.verify.cli import console_main

if __name__ == "__main__":  # pragma: no cover - exercised by a subprocess test
    console_main()
