"""The embedded layout for trying sharding and for the tests: N shard clusters beside the embedded
default, and the router database ``cogmem_router`` in the default cluster."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cogmem_pg.cluster import Cluster
from cogmem_pg.migrate import install
from cogmem_pg.shards.gut import share_gut_key
from cogmem_pg.shards.router import ROUTER_DATABASE, install_router


@dataclass(frozen=True)
class LocalShards:
    """The embedded layout: shard clusters beside the default cluster, the router inside it."""

    home: Path
    base_port: int

    @classmethod
    def beside(cls, default: Cluster) -> LocalShards:
        return cls(home=default.home / "shards", base_port=default.port + 1)

    def node(self, n: int) -> Cluster:
        return Cluster(home=self.home / f"node{n}", port=self.base_port + n)

    def nodes(self) -> list[Cluster]:
        found = sorted(p.name for p in self.home.glob("node*") if p.name[4:].isdigit()) if self.home.exists() else []
        return [self.node(int(name[4:])) for name in found]


def init_local(default: Cluster, nodes: int, partitions: int = 4) -> tuple[LocalShards, list[str], int]:
    """Starts NODES shard clusters with cogmem installed, one Gut shard key on all of them, and makes the
    router in DEFAULT; PARTITIONS are spread over the nodes in turn. Returns the layout, the partitions'
    connection strings and the number of routed functions. Running it again keeps the shards' data (and
    their key) and rebuilds the router."""
    if partitions < 1 or partitions & (partitions - 1):
        raise ValueError(f"PL/Proxy needs a power of two of partitions, not {partitions}")
    layout = LocalShards.beside(default)
    clusters = [layout.node(n) for n in range(nodes)]
    for cluster in clusters:
        cluster.start()
        install(cluster.dsn())
    default.start()
    install(default.dsn())  # as `cogmem up` does: the router's cluster needs cogmem's roles too
    default.ensure_database(ROUTER_DATABASE)
    # No user=: PL/Proxy connects as the calling role.
    dsns = [clusters[p % nodes].dsn().replace("user=postgres ", "") for p in range(partitions)]
    share_gut_key(dsns)
    routed = install_router(default.dsn(ROUTER_DATABASE), dsns, clusters[0].dsn())
    return layout, dsns, routed
