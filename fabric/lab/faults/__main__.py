"""`python -m fabric.lab.faults flapper --dev DEV ...`: the process a `flap` fault runs."""

import sys

from fabric.lab.faults.flapper import main

if __name__ == "__main__":
    sys.exit(main())
