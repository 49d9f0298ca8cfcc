"""Entry point: ``python -m benchmarks run|list``."""

import sys

from benchmarks.cli import main

if __name__ == "__main__":
    sys.exit(main())
