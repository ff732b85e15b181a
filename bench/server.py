"""The private cluster the scale benchmarks run on: tuned for this 24 GB machine, not the embedded default."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cogmem_pg.cluster import Cluster


def tuned_cluster(port: int) -> tuple[Cluster, Path]:
    """A started cluster in a fresh temporary home (a quarter of the memory as shared buffers)."""
    home = Path(tempfile.mkdtemp(prefix="cogmem-bench-"))
    os.chmod(home, 0o755)
    cluster = Cluster(
        home=home / "cluster",
        port=port,
        settings={"shared_buffers": "'6GB'", "maintenance_work_mem": "'1GB'", "max_wal_size": "'8GB'"},
    )
    cluster.start()
    return cluster, home
