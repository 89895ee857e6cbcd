"""``python -m verify.sweep ARGS`` is ``attnlimits sweep ARGS``."""
import sys

from verify.sweep.cli import main

if __name__ == "__main__":
    sys.exit(main())
