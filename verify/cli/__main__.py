"""``python -m attnlimits.verify.cli``: the command line."""
from attnlimits.verify.cli import console_main

console_main()
