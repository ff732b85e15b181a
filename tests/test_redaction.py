"""sql/040-redaction.sql: secrets never reach the memory store."""

import pytest

from tests.conftest import one


@pytest.mark.parametrize(
    ("text", "redacted", "kinds"),
    [
        ("Card 4111 1111 1111 1111 was declined", "Card [REDACTED:PAN] was declined", ["pan"]),
        ("card 4111-1111-1111-1111 exp 12/28", "card [REDACTED:PAN] exp 12/28", ["pan"]),
        ("amex 378282246310005.", "amex [REDACTED:PAN].", ["pan"]),
        # Not Luhn-valid, or too short: phone numbers and order ids stay.
        ("order 4111111111111112 and phone 0212 555 12 12", "order 4111111111111112 and phone 0212 555 12 12", []),
        ("db password=hunter2 on web-1", "db password=[REDACTED] on web-1", ["password"]),
        ('config {"api_key": "abc123"}', 'config {"api_key": [REDACTED]}', ["password"]),
        ("şifre: Gizli123 olarak değişti", "şifre: [REDACTED] olarak değişti", ["password"]),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc", "Authorization: Bearer [REDACTED]", ["bearer_token"]),
        ("key AKIAIOSFODNN7EXAMPLE leaked", "key [REDACTED:TOKEN] leaked", ["api_token"]),
        (
            "here:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nthanks",
            "here:\n[REDACTED:PRIVATE_KEY]\nthanks",
            ["private_key"],
        ),
        ("nothing secret here", "nothing secret here", []),
    ],
)
def test_redact(db, text, redacted, kinds):
    row = db.execute("SELECT redacted, redactions FROM cogmem.redact(%s)", (text,)).fetchone()
    assert row == (redacted, kinds)


def test_luhn(db):
    assert one(db, "SELECT cogmem._luhn_valid('4111111111111111')") is True
    assert one(db, "SELECT cogmem._luhn_valid('4111111111111112')") is False
    assert one(db, "SELECT cogmem._luhn_valid('411111111111')") is False  # 12 digits: not a PAN
