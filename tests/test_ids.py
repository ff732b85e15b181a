"""sql/001-ids.sql: ids that carry their tenant's routing key."""

from tests.conftest import one


def test_recall_and_session_ids_begin_with_the_tenants_routing_key(db, tenant):
    key = one(db, "SELECT lpad(to_hex(cogmem._tenant_key(%s)), 8, '0')", (tenant,))
    assert one(db, "SELECT cogmem._tenant_key(%s) = hashtext(%s) & 2147483647", (tenant, tenant))
    db.execute("SELECT * FROM cogmem.remember(%s, 'Deploys go out on Tuesdays')", (tenant,))
    recall_id = one(db, "SELECT recall_id FROM cogmem.recall(%s, 'when do deploys go out?') LIMIT 1", (tenant,))
    session_id = one(db, "SELECT cogmem.start_session(%s)", (tenant,))
    for made in (recall_id, session_id, one(db, "SELECT cogmem._keyed_uuid(%s)", (tenant,))):
        assert str(made).startswith(key) and str(made)[14] == "4"  # still a version-4 UUID
    assert one(db, "SELECT count(DISTINCT cogmem._keyed_uuid(%s)) FROM generate_series(1, 1000)", (tenant,)) == 1000
