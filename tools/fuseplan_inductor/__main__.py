"""python -m fuseplan_inductor: see run.py."""

import sys

from .run import main

sys.exit(main())
