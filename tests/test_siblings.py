"""sql/064-siblings.sql: memories alike in all but their details are kept apart and shown as siblings."""

from tests.conftest import blend, unit_vector
from tests.test_remember import remember


def test_siblings_with_different_details_are_both_kept(db, tenant):
    base = unit_vector(7)
    a = remember(db, tenant, "web-1 listens on 10.0.0.5 port 8080", embedding=base)
    b = remember(db, tenant, "web-2 listens on 10.0.0.6 port 8080", embedding=blend(base, unit_vector(8), 0.1))
    assert a[3] == b[3] == "created"
    assert a[0] != b[0]
