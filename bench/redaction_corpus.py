"""A labelled corpus for redaction, our own: secrets in disguises, and benign texts that look like them.

`secrets(seed)` yields (disguise, text, secret) with one secret in each text, in every disguise a person
or a tool might produce: grouped, dotted, full-width, zero-width spaces, no-break spaces, soft hyphens,
keywords split by invisible characters, quoted values. `benign(n, seed)` yields texts full of digits and
hex that are not secrets: UUIDs, hashes, timestamps, IPs, order, invoice and phone numbers, versions.
Deterministic for a seed, so the test and the figures in bench/RESULTS.md see the same texts.
"""

from __future__ import annotations

import random
import re
import string
import unicodedata
import uuid
from collections.abc import Callable, Iterator

ZWSP, NBSP, SHY, WJ = "\u200b", "\u00a0", "\u00ad", "\u2060"
FULL_WIDTH = str.maketrans({c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits})


def luhn_card(rng: random.Random, length: int = 16, prefix: str = "4") -> str:
    digits = [int(c) for c in prefix] + [rng.randrange(10) for _ in range(length - len(prefix) - 1)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        total += sum(divmod(d * 2, 10)) if i % 2 == 0 else d
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


def iban(rng: random.Random, country: str = "DE", length: int = 22) -> str:
    body = "".join(str(rng.randrange(10)) for _ in range(length - 4))
    moved = body + "".join(str(ord(c) - 55) for c in country) + "00"
    return f"{country}{98 - int(moved) % 97:02d}{body}"


def grouped(number: str, sep: str, size: int = 4) -> str:
    return sep.join(number[i : i + size] for i in range(0, len(number), size))


def _cards(rng: random.Random) -> dict[str, Callable[[], tuple[str, str]]]:
    def card(fmt: Callable[[str], str], length: int = 16, prefix: str = "4") -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            number = luhn_card(rng, length, prefix)
            return fmt(number), number

        return make

    return {
        "card plain": card(lambda n: n),
        "card spaces": card(lambda n: grouped(n, " ")),
        "card dashes": card(lambda n: grouped(n, "-")),
        "card dots": card(lambda n: grouped(n, ".")),
        "card no-break spaces": card(lambda n: grouped(n, NBSP)),
        "card zero-width spaces": card(lambda n: grouped(n, ZWSP)),
        "card zero-width in the digits": card(lambda n: ZWSP.join(n)),
        "card full-width digits": card(lambda n: n.translate(FULL_WIDTH)),
        "card full-width grouped": card(lambda n: grouped(n, " ").translate(FULL_WIDTH)),
        "card amex 15": card(lambda n: f"{n[:4]} {n[4:10]} {n[10:]}", 15, "37"),
        "card 19 digits": card(lambda n: n, 19, "6"),
        "card word joiners": card(lambda n: grouped(n, WJ)),
    }


def _keys(rng: random.Random) -> dict[str, Callable[[], tuple[str, str]]]:
    def word(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    def password(keyword: str, quote: str = "") -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            value = word(12)
            return f"{keyword}={quote}{value}{quote}", value

        return make

    def token(fmt: Callable[[], str]) -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            value = fmt()
            return value, value

        return make

    def strong() -> str:
        """A password as people pick them for user:password: letters, a capital, digits, maybe a symbol."""
        return (
            rng.choice(string.ascii_uppercase)
            + word(rng.randrange(6, 12))
            + str(rng.randrange(10, 100))
            + rng.choice(["", "!", "#", "$", "%"])
        )

    def credential(fmt: Callable[[str, str], str], make: Callable[[], str] = strong) -> Callable[[], tuple[str, str]]:
        def made() -> tuple[str, str]:
            user, value = rng.choice(["admin", "root", "deploy", "ayse.yilmaz", "svc_backup"]), make()
            return fmt(user, value), value

        return made

    def table(name: str) -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            value = strong()
            return f"| Host | db-1 |\n| {name} | {value} |\n| Port | 5432 |", value

        return make

    def prose(template: str) -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            value = strong()
            return template.format(value), value

        return make

    def token_in(value_of: Callable[[], str], templates: list[str]) -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            value = value_of()
            return rng.choice(templates).format(value), value

        return make

    def json_member(name: str) -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            value = word(14)
            return f'{{"user": "svc", "{name}": "{value}"}}', value

        return make

    def card_wrapped() -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            number = luhn_card(rng, 16, rng.choice("2345"))
            cut = rng.choice([4, 8, 12])
            return f"{grouped(number[:cut], ' ')}\n{grouped(number[cut:], ' ')}", number

        return make

    def an_iban(sep: str) -> Callable[[], tuple[str, str]]:
        def make() -> tuple[str, str]:
            value = iban(rng, rng.choice(["DE", "GB", "TR", "FR", "NL"]), rng.choice([18, 22, 26]))
            return grouped(value, sep) if sep else value, value

        return make

    return {
        "password plain": password("password"),
        "password quoted": password("password", '"'),
        "password zero-width keyword": password(f"pass{ZWSP}word"),
        "password soft hyphen keyword": password(f"pass{SHY}word"),
        "password full-width keyword": password("ｐａｓｓｗｏｒｄ"),
        "api key": password("api_key"),
        "secret": password("client_secret"),
        "şifre": password("şifre"),
        "aws key": token(lambda: "AKIA" + word(16, string.ascii_uppercase + string.digits)),
        "github token": token(lambda: "ghp_" + word(36)),
        "slack token": token(lambda: "xoxb-" + word(24)),
        "openai key": token(lambda: "sk-" + word(40)),
        "bearer": token(lambda: "Bearer " + word(32)),
        "private key": token(
            lambda: "-----BEGIN RSA PRIVATE KEY-----\n" + word(64) + "\n-----END RSA PRIVATE KEY-----"
        ),
        "pgp private key": token(
            lambda: "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + word(64) + "\n-----END PGP PRIVATE KEY BLOCK-----"
        ),
        "stripe secret key": token(lambda: rng.choice(["sk_live_", "sk_test_", "rk_live_"]) + word(24)),
        "google api key": token(lambda: "AIza" + word(35, string.ascii_letters + string.digits + "_-")),
        "gitlab token": token(lambda: "glpat-" + word(20, string.ascii_letters + string.digits + "_-")),
        "jwt": token(lambda: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + word(rng.randrange(20, 60)) + "." + word(43)),
        "password in a markdown table": table(rng.choice(["Password", "password", "Şifre", "Parola", "API key"])),
        "password in prose": prose(
            rng.choice(["the admin password is {}", "The root password was {} until Monday", "password is now {}"])
        ),
        "şifre in Turkish prose": prose(
            rng.choice(["sunucunun şifresi {}", "yeni parolası {} oldu", "şifre olarak {}"])
        ),
        "pin in prose": token_in(lambda: str(rng.randrange(1000, 10**6)), ["my PIN is {}", "PIN kodu: {}", "pin {}"]),
        "password in an env file": password(rng.choice(["DB_PASSWORD", "REDIS_PASSWORD", "APP_SECRET"])),
        "password in JSON": json_member(rng.choice(["password", "dbPassword", "şifre"])),
        "card wrapped over a line": card_wrapped(),
        "iban": an_iban(""),
        "iban grouped": an_iban(" "),
        "credential user:password": credential(lambda u, p: f"{u}:{p}"),
        "credential email:password": credential(lambda u, p: f"{u}@example.com:{p}"),
        "credential full-width": credential(lambda u, p: f"{u}:{p}".translate(FULL_WIDTH)),
        "credential zero-width": credential(lambda u, p: f"{u}:{p[:3]}{ZWSP}{p[3:]}"),
        "credential in a URL": credential(
            lambda u, p: f"postgres://{u}:{p}@db-{rng.randrange(10)}.internal:5432/app",
            lambda: word(rng.randrange(6, 16), string.ascii_lowercase + string.digits),
        ),
        "credential in a URL, no user": credential(
            lambda u, p: f"redis://:{p}@cache:6379/0", lambda: word(12, string.ascii_lowercase)
        ),
    }


CONTEXTS = [
    "Please note: {}",
    "the customer sent {} by mail",
    "Müşteri şunu yazdı: {} (acil)",
    "{}",
    "log line 2026-12-01T10:00:00Z user=ayse value {} done.",
]


def secrets(seed: int = 1, per_disguise: int = 20) -> Iterator[tuple[str, str, str]]:
    """(disguise, text, the secret as it would be stored unredacted) for every disguise, per_disguise each."""
    rng = random.Random(seed)
    for disguise, make in {**_cards(rng), **_keys(rng)}.items():
        for n in range(per_disguise):
            shown, value = make()
            yield disguise, CONTEXTS[n % len(CONTEXTS)].format(shown), value


def leaked(secret: str, redacted: str) -> bool:
    """Whether SECRET survives in REDACTED, read as redaction reads it (NFKC, no invisible separators)."""
    seen = unicodedata.normalize("NFKC", redacted)
    return secret in seen or secret in re.sub(r"[\s.\-\u200b\u2060]", "", seen)


def benign(n: int = 100_000, seed: int = 2) -> Iterator[str]:
    """Texts with digits and hex everywhere and no secret in them."""
    rng = random.Random(seed)
    makers: list[Callable[[], str]] = [
        lambda: f"request {uuid.UUID(int=rng.getrandbits(128))} failed",
        lambda: f"deployed build {rng.getrandbits(160):040x} to staging",
        lambda: f"sha256 {rng.getrandbits(256):064x}",
        lambda: f"md5 {rng.getrandbits(128):032x} matches",
        lambda: f"at {rng.randrange(1_600_000_000_000, 1_900_000_000_000)} ms since the epoch",
        lambda: (
            f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} {rng.randrange(24):02d}:00:00"
            f".{rng.randrange(10**6):06d}"
        ),
        lambda: f"server 10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)} is up",
        lambda: f"order #{rng.randrange(10**9, 10**10)} shipped",
        lambda: f"invoice INV-{rng.randrange(10**11, 10**12)}-{rng.randrange(100):02d}",
        lambda: f"call me on +90 5{rng.randrange(10**8, 10**9)}",
        lambda: f"version {rng.randrange(20)}.{rng.randrange(100)}.{rng.randrange(1000)}",
        lambda: f"trace id {rng.getrandbits(64):016x}-{rng.getrandbits(64):016x}",
        lambda: f"object {uuid.UUID(int=rng.getrandbits(128)).hex}",
        lambda: f"tel {rng.randrange(100, 1000)} {rng.randrange(100, 1000)} {rng.randrange(1000, 10000)}",
        lambda: f"the token bucket refills {rng.randrange(1000)} per second",
        lambda: f"kernel 6.{rng.randrange(20)}.0-{rng.randrange(100)}-amd64 on host web-{rng.randrange(100)}",
        # Colons that are not user:password.
        lambda: f"mix at a ratio of {rng.randrange(1, 20)}:{rng.randrange(1, 20)}",
        lambda: f"Note: {rng.choice(['Something', 'Deploys', 'Tuesday'])} {rng.choice(['changed', 'moved', 'is off'])}",
        lambda: f"meet at {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d} UTC",
        lambda: "fe80::" + ":".join(f"{rng.getrandbits(16):x}" for _ in range(rng.randrange(1, 5))),
        lambda: f"status: {rng.choice(['green', 'degraded'])}, owner: {rng.choice(['Ayse', 'Mehmet2'])}",
        lambda: f"see https://web-{rng.randrange(100)}.example.com:{rng.randrange(1024, 65536)}/health",
        lambda: f"image {rng.choice(['node', 'python', 'nginx'])}:{rng.randrange(10, 25)}.{rng.randrange(10)}-alpine",
        lambda: f"db at localhost:{rng.randrange(1024, 65536)}",
        lambda: f"digest sha256:{rng.getrandbits(256):064x}",
        lambda: f"ID:{str(uuid.UUID(int=rng.getrandbits(128))).upper()}",
        lambda: f"C:\\Users\\Ayse{rng.randrange(10)}\\Documents",
        lambda: f"git@github.com:acme/Service{rng.randrange(100)}.git",
        # Words of secrets with no secret after them (issue 46's kinds, as people write around them).
        lambda: f"| password | string | {rng.choice(['required', 'Required', 'optional'])} |",
        lambda: f"| Şifre | metin | en az {rng.randrange(8, 16)} karakter |",
        lambda: f"the password is {rng.choice(['in the vault', 'stored in Vault', 'correct', 'on the sticky note'])}",
        lambda: f"reset the password in {rng.randrange(2, 60)} minutes",
        lambda: f"the password is {rng.randrange(8, 20)} characters long",
        lambda: f"şifre en az {rng.randrange(8, 16)} karakter olmalı",
        lambda: f"pin {rng.randrange(1, 40)} on the header is loose",
        lambda: f"JWT tokens start with eyJ and have {rng.randrange(3, 4)} parts",
        lambda: "use the sk_live_ prefix only in production",
        lambda: f"-----BEGIN PUBLIC KEY-----\nMIIB{rng.getrandbits(64):x}\n-----END PUBLIC KEY-----",
        lambda: (
            f"years {rng.randrange(1990, 2030)} {rng.randrange(1990, 2030)}\n{rng.randrange(1990, 2030)} "
            f"{rng.randrange(1990, 2030)}"
        ),
        lambda: f"totals {rng.randrange(100, 999)}\n{rng.randrange(1000, 9999)} items",
    ]
    for i in range(n):
        yield makers[i % len(makers)]()


def section(conn: object) -> list[str]:
    """The '## Redaction' table of bench/RESULTS.md, measured through cogmem.redact()."""
    import time
    from collections import Counter

    cases = list(secrets())
    rows = conn.execute(  # type: ignore[attr-defined]
        "SELECT (cogmem.redact(t)).redacted FROM unnest(%s::text[]) WITH ORDINALITY AS x (t, n) ORDER BY n",
        ([text for _, text, _ in cases],),
    ).fetchall()
    missed = Counter(
        disguise for (disguise, _, secret), (redacted,) in zip(cases, rows, strict=True) if leaked(secret, redacted)
    )
    texts = list(benign())
    started = time.perf_counter()
    altered = conn.execute(  # type: ignore[attr-defined]
        "SELECT count(*) FROM unnest(%s::text[]) AS t WHERE (cogmem.redact(t)).redacted <> t", (texts,)
    ).fetchone()[0]
    seconds = time.perf_counter() - started
    disguises = sorted({d for d, _, _ in cases})
    return [
        f"`bench/redaction_corpus.py` (seeded, ours): {len(cases)} secrets in {len(disguises)} disguises "
        f"({', '.join(disguises)}), and {len(texts):,} benign texts full of digits and hex (UUIDs, hashes, "
        "epoch milliseconds, timestamps, IPs, order, invoice and phone numbers, versions, trace ids) and colons "
        "that are not credentials (ratios, times, IPv6, host:port, image tags, digests, Windows paths).",
        "",
        "| secrets caught | benign texts altered | µs per benign text |",
        "|---:|---:|---:|",
        f"| {len(cases) - sum(missed.values())} of {len(cases)} | {altered} of {len(texts):,} "
        f"| {seconds / len(texts) * 1e6:.0f} |",
        "",
        *(f"Leaked: {d} ({n})." for d, n in sorted(missed.items())),
    ]


if __name__ == "__main__":
    # `python bench/redaction_corpus.py --dsn DSN [--results bench/RESULTS.md]`
    import argparse
    from pathlib import Path

    import psycopg

    parser = argparse.ArgumentParser(description="Redaction on the corpus of bench/redaction_corpus.py.")
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    with psycopg.connect(args.dsn) as conn:
        lines = section(conn)
    print("\n".join(lines))
    if args.results:
        text = args.results.read_text(encoding="utf-8")
        heading = "\n## Redaction\n"
        if heading in text:
            head, _, rest = text.partition(heading)
            tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""
        else:
            head, marker, rest = text.partition("\n## Speed at scale\n")
            tail = marker + rest
        args.results.write_text(head.rstrip("\n") + "\n" + heading + "\n" + "\n".join(lines) + "\n" + tail, "utf-8")
