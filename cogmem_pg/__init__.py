"""cogmem-pg: cognitive memory for AI agents, inside PostgreSQL."""

from cogmem_pg.client import Client, Memory, Recall, RecallItem
from cogmem_pg.migrate import install

__all__ = ["Client", "Memory", "Recall", "RecallItem", "install"]
__version__ = "0.1.0"
