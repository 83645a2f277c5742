"""``python -m grpodyn``: the command line, as the ``grpodyn`` console script runs it."""

from grpodyn.console import console_main

console_main()
