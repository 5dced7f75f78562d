#!/usr/bin/env python3
"""Export PyTorch Inductor's pre-fusion graphs and Inductor's own plans for
fuseplan (docs/exporter.md).  A thin wrapper: the exporter lives in the
fuseplan_inductor package next to this file (pip install ./tools), and this
script runs it without installing."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuseplan_inductor.export import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
