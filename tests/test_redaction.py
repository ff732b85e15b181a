"""sql/040-redaction.sql: secrets never reach the memory store."""

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.redaction_corpus import FULL_WIDTH, benign, grouped, leaked, luhn_card, secrets
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
        # user:password, on its own and in a URL's user information.
        ("login admin:Sup3rS3cret now", "login admin:[REDACTED] now", ["credential"]),
        ('{"c": "admin:Sup3rS3cret"}', '{"c": "admin:[REDACTED]"}', ["credential"]),
        ("ayse@example.com:P@ssw0rd.", "ayse@example.com:[REDACTED].", ["credential"]),
        ("ｒｏｏｔ:Ｓｕｐ３ｒ", "ｒｏｏｔ:Ｓｕｐ３ｒ", []),  # 5 characters: too short to be a password
        ("ｒｏｏｔ:Ｓｕｐ３ｒＳ３ｃｒｅｔ", "root:[REDACTED]", ["credential"]),  # full-width: seen as ASCII
        ("root:Sup3r\u200bS3cret", "root:[REDACTED]", ["credential"]),
        (
            "postgres://app:hunter2@db.example.com:5432/app?sslmode=require",
            "postgres://app:[REDACTED]@db.example.com:5432/app?sslmode=require",
            ["credential"],
        ),
        ("redis://:s3cr3t@cache:6379/0", "redis://:[REDACTED]@cache:6379/0", ["credential"]),
        # Colons that are not credentials stay as written.
        ("mix them at a ratio of 3:2", "mix them at a ratio of 3:2", []),
        ("Note: Something changed", "Note: Something changed", []),
        ("meet at 10:30:15, logged 2026-12-01T10:00:00Z", "meet at 10:30:15, logged 2026-12-01T10:00:00Z", []),
        (
            "route fe80::1ff:fe23:4567:890a via 2001:db8::ff00:42:8329",
            "route fe80::1ff:fe23:4567:890a via 2001:db8::ff00:42:8329",
            [],
        ),
        ("status: Degraded2 since noon", "status: Degraded2 since noon", []),
        ("open https://web-1.example.com:8080/health", "open https://web-1.example.com:8080/health", []),
        ("image node:18-alpine, then nginx:1.25.3", "image node:18-alpine, then nginx:1.25.3", []),
        ("db at localhost:5432", "db at localhost:5432", []),
        ("C:\\Users\\Admin2\\Documents", "C:\\Users\\Admin2\\Documents", []),
        ("mailto:Ayse.Yilmaz2@example.com", "mailto:Ayse.Yilmaz2@example.com", []),
        ("ID:3F2504E0-4F89-11D3-9A0C-0305E82C3301", "ID:3F2504E0-4F89-11D3-9A0C-0305E82C3301", []),
        ("git@github.com:acme/Service2.git", "git@github.com:acme/Service2.git", []),
        ("admin:hunter22", "admin:hunter22", []),  # no capital, no symbol: not told from an id
    ],
)
def test_redact(db, text, redacted, kinds):
    row = db.execute("SELECT redacted, redactions FROM cogmem.redact(%s)", (text,)).fetchone()
    assert row == (redacted, kinds)


def test_luhn(db):
    assert one(db, "SELECT cogmem._luhn_valid('4111111111111111')") is True
    assert one(db, "SELECT cogmem._luhn_valid('4111111111111112')") is False
    assert one(db, "SELECT cogmem._luhn_valid('411111111111')") is False  # 12 digits: not a PAN


def test_the_redaction_corpus_every_secret_caught_and_benign_texts_untouched(db):
    """bench/redaction_corpus.py: 920 secrets in 46 disguises, all caught; 100,000 texts full of digits,
    hex, colons and the words of secrets (a table's Password column, "the password is in the vault") that
    are not secrets, at most 0.01% altered."""
    cases = list(secrets())
    assert len(cases) >= 920 and len({d for d, _, _ in cases}) >= 46
    rows = db.execute(
        "SELECT (cogmem.redact(t)).redacted FROM unnest(%s::text[]) WITH ORDINALITY AS x (t, n) ORDER BY n",
        ([text for _, text, _ in cases],),
    ).fetchall()
    missed = [
        disguise for (disguise, _, secret), (redacted,) in zip(cases, rows, strict=True) if leaked(secret, redacted)
    ]
    assert missed == []
    texts = list(benign())
    assert len(texts) >= 100_000
    altered = db.execute(
        "SELECT t FROM unnest(%s::text[]) AS t WHERE (cogmem.redact(t)).redacted <> t", (texts,)
    ).fetchall()
    assert len(altered) <= len(texts) // 10_000, altered[:5]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0xyzSECRET\n-----END PGP PRIVATE KEY BLOCK-----",
            "lQOYBF0xyz",
        ),
        ("charge it with sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
        ("maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "SyD-9tSrke72PouQMnMX"),
        ("ci uses glpat-Ab3dEf6hIj9kLm2nOp5q", "Ab3dEf6hIj9kLm2nOp5q"),
        (
            "Authorization came as eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
            "dozjgNryP4J3jVmNHl0w5N",
        ),
        ("| Host | db-1 |\n| Password | Hunter2Table! |", "Hunter2Table"),
        ("fyi the admin password is Hunter2Prose!", "Hunter2Prose"),
        ("sunucunun şifresi Gizli2026! olarak ayarlandı", "Gizli2026"),
        ("card 4111 1111 1111\n1111, thanks", "4111111111111111"),
        ("my PIN is 4921", "4921"),
    ],
)
def test_the_secrets_issue_46_found_are_redacted(db, text, secret):
    redacted, kinds = db.execute("SELECT * FROM cogmem.redact(%s)", (text,)).fetchone()
    assert not leaked(secret, redacted), redacted
    assert kinds


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    digits=st.integers(min_value=13, max_value=19),
    separator=st.sampled_from(["", " ", "-", ".", "\u00a0", "\u200b", "\u2060"]),
    group=st.integers(min_value=3, max_value=6),
    before=st.text(alphabet=" :=,;(abc", max_size=8),
    after=st.text(alphabet=" ,;.)xyz", max_size=8),
    seed=st.integers(min_value=0, max_value=2**32),
    full_width=st.booleans(),
)
def test_a_card_in_any_disguise_never_survives(db, digits, separator, group, before, after, seed, full_width):
    rng = random.Random(seed)
    number = luhn_card(rng, digits, rng.choice("23456"))
    shown = grouped(number, separator, group)
    if full_width:
        shown = shown.translate(FULL_WIDTH)
    text = f"card{before} {shown} {after}end"
    redacted, kinds = db.execute("SELECT * FROM cogmem.redact(%s)", (text,)).fetchone()
    assert number not in re.sub(r"[^0-9]", "", redacted) and kinds == ["pan"]
    assert db.execute("SELECT (cogmem.redact(%s)).redacted", (redacted,)).fetchone()[0] == redacted


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("pass", True), ("pwd", True), ("password", True), ("dbPassword", True), ("db_pass", True),
        ("x-api-key", True), ("apiKey", True), ("APIKey", True), ("access_token", True), ("client_secret", True),
        ("secret_key", True), ("Authorization", True), ("credentials", True), ("ŞİFRE", True), ("cvv", True),
        ("pass\u200bword", True), ("ｐａｓｓ", True),
        ("bypass", False), ("max_tokens", False), ("token_count", False), ("password_hint", False),
        ("monkey", False), ("key", False), ("passkey", False), ("tokens", False),
    ],
)  # fmt: skip
def test_a_member_name_that_says_secret(db, name, secret):
    assert one(db, "SELECT cogmem._secret_name(%s)", (name,)) is secret
