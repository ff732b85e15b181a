"""Row-level security reads a role's own tenant grants through an index on the role.

Every statement on a tenant table asks which tenants the current role reaches (sql/000-helpers.sql,
_granted_tenants). That read every row of tenant_access and evaluated its own_grants policy on each:
~3 ms a statement with a thousand grants in the table. On a database of 1,000,000 memories, as a role
granted one tenant of 1,000, recall took 67 ms instead of the owner's 20 ms, and remember 47 ms instead
of 6 ms. The helper now walks the role's memberships and looks its grants up by role name: 24 ms and
8 ms.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("CREATE INDEX tenant_access_role_idx ON cogmem.tenant_access (role_name, tenant)")


def downgrade() -> None:
    execute("DROP INDEX cogmem.tenant_access_role_idx")
