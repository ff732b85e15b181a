"""sql/030-routing.sql: the inbound router, English and Turkish."""

import pytest

from tests.conftest import one

CASES = [
    # explicit rules
    ("Don't restart the server at night, last time everything went sideways.", "dos_and_donts"),
    ("Never deploy on Fridays.", "dos_and_donts"),
    ("Always tag releases before deploying.", "dos_and_donts"),
    ("Please do not email invoices as Word files.", "dos_and_donts"),
    ("Backups must be encrypted.", "dos_and_donts"),
    ("The staging box is fine. Avoid touching prod this week.", "dos_and_donts"),
    ("Sunucuyu gece restart etme", "dos_and_donts"),
    ("Asla müşteri verisini loglara yazma", "dos_and_donts"),
    ("Her zaman önce config testi yap", "dos_and_donts"),
    ("Yedekler şifrelenmeli", "dos_and_donts"),
    ("Cuma günü deploy yapmayın.", "dos_and_donts"),
    # incidents with impact
    ("Outage in March: db-1 ran out of disk and the shop was down for 2 hours.", "shocks"),
    ("The payment API crashed and 300 customers could not pay.", "shocks"),
    ("Dün gece veritabanı çöktü, tüm müşteriler 3 saat erişemedi.", "shocks"),
    # steps
    ("To rotate: 1. drain the node 2. restart nginx 3. check health", "procedures"),
    ("First stop the workers, then run the migration, finally start them again.", "procedures"),
    ("Önce servisi durdur, sonra yedeği al.", "procedures"),
    ("- drain node\n- restart nginx\n- check health", "procedures"),
    # everything else
    ("The billing contact is Maria in finance.", "fresh"),
    ("Ali prefers calls in the morning.", "fresh"),
    ("There was an incident report template in the wiki.", "fresh"),
    ("Toplantı salı saat 10'da.", "fresh"),
]


@pytest.mark.parametrize(("content", "ring"), CASES)
def test_route(db, content, ring):
    assert one(db, "SELECT cogmem.route(%s)", (content,)) == ring


def test_route_is_strict_and_immutable(db):
    assert one(db, "SELECT cogmem.route(NULL)") is None
    assert one(db, "SELECT provolatile FROM pg_proc WHERE oid = 'cogmem.route(text)'::regprocedure") == "i"
