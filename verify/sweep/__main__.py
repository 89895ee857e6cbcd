"""``python -m attnlimits.verify.sweep ARGS`` is ``attnlimits sweep ARGS``."""
import sys

from attnlimits.verify.sweep.cli import main

if __name__ == "__main__":
    sys.exit(main())
