"""``python -m leet``."""

import sys

from leet.cli import main

sys.exit(main())
