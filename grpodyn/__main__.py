"""``python -m grpodyn``: the command line."""

import sys

from grpodyn.cli import main

sys.exit(main())
