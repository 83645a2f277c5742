"""The entry of the ``grpodyn`` console script and of ``python -m grpodyn``.

It turns what stops a command from outside into an exit status: Ctrl-C into one line and 130
(128 + SIGINT, as a shell reports it), a reader that closed the pipe (``| head``) into a quiet
0. The command line is imported inside that handling: its modules import numpy and the
loaders (about 0.15 s), and a Ctrl-C meanwhile would otherwise print Python's traceback.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

__all__ = ["console_main", "EXIT_INTERRUPTED"]

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


def console_main() -> NoReturn:
    """Run the command line on ``sys.argv`` and exit with its status."""
    try:
        from grpodyn.cli import main

        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (``| head``) closed the pipe: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status of a SIGINT
        print("grpodyn: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    sys.exit(code)
