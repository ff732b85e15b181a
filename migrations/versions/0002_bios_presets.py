"""Record which BIOS presets were loaded, with their version and checksum.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
CREATE TABLE cogmem.bios_presets (
    preset text PRIMARY KEY,
    version text NOT NULL,
    title text NOT NULL,
    sha256 text NOT NULL,
    rules_added integer NOT NULL,
    loaded_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE cogmem.bios_presets IS
'Global reference table: BIOS presets loaded into this database, the version and file checksum of the last load.';
""")


def downgrade() -> None:
    execute("DROP TABLE cogmem.bios_presets")
