"""``python -m attnlimits.verify.cli``: the command line."""
from attnlimits.verify.cli import console_main

if __name__ == "__main__":
    console_main()
