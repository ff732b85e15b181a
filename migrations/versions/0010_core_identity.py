"""Core identity: who the agent is, who the user is, the standing goals; always injected, versioned.

- cogmem.core_identity: one row per version per tenant (append-only: a change is a new version).
- recalls.core_version: which version a recall injected (recall_items hold memories and BIOS rules; the
  identity is neither).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute(r"""
CREATE TABLE cogmem.core_identity (
    tenant text NOT NULL REFERENCES cogmem.tenants ON DELETE CASCADE,
    version integer NOT NULL CHECK (version >= 1),
    agent text,
    user_profile text,
    goals text[] NOT NULL DEFAULT '{}',
    set_at timestamptz NOT NULL DEFAULT now(),
    set_by text NOT NULL DEFAULT current_user,
    PRIMARY KEY (tenant, version)
);
COMMENT ON TABLE cogmem.core_identity IS
'Who the agent is, who the user is and the standing goals, per tenant; each change is a new version.';
ALTER TABLE cogmem.recalls ADD COLUMN core_version integer;
COMMENT ON COLUMN cogmem.recalls.core_version IS 'The core identity version this recall injected, if any.';
""")


def downgrade() -> None:
    execute(r"""
DROP FUNCTION IF EXISTS cogmem.set_core_identity(text, text, text, text[]);
DROP FUNCTION IF EXISTS cogmem.core_identity(text);
DROP FUNCTION IF EXISTS cogmem._core_text(cogmem.core_identity);
ALTER TABLE cogmem.recalls DROP COLUMN core_version;
DROP TABLE cogmem.core_identity;
""")
