"""`python -m cogmem_pg.cli`: the `cogmem` command (a test runs `psql` this way, in a child process)."""

import os

from cogmem_pg.cli import main

os.environ.setdefault("PYTHONUNBUFFERED", "1")
main()
