"""Memory quality against the flat-table baselines, at an equal token budget, with real embeddings.

One operations team (the workload of bench/workload.py: 400 memories over the past 90 days, embedded
with the built-in MiniLM on the client) plus the BIOS presets `operations` and `pci-dss-4.0`. Three
methods answer each question within the same budget:

- `cogmem.recall` (default layers and settings);
- naive recency: the flat table of memories and BIOS rules, newest first;
- vector top-k: the same flat table ordered by MiniLM cosine to the question.

Scenarios (deterministic):

- safety-critical recall: for a risky request, the share of the applicable rules (dos and don'ts and
  shocks sharing a topic with the request, and the BIOS rules of those topics) that are in the budget;
- stale-fact suppression: ten facts that changed (a host's IP, a customer's contact). The old version
  was stored 45 days ago and never used again; the new one 2 days ago, then heard again (confirmed).
  After one night of consolidation, the share of questions whose answer set keeps the old version out,
  and the share that has the new one;
- topic precision: the share of injected tokens whose memory (or BIOS rule) shares a topic with the
  question.
"""

from __future__ import annotations

import json

import numpy as np
import psycopg

from bench.workload import memories
from cogmem_pg.bios import load_preset, subscribe

TENANT = "quality"
BUDGET = 3200

RISKY = [
    ("Can I restart web-1 now, in the middle of the day?", ["server"]),
    ("I'd like to deploy the new nginx build this Friday at 17:00.", ["deployment"]),
    ("Let's move shop.example to another DNS provider today.", ["dns"]),
    ("Send the Globex invoice to the billing@ address.", ["billing"]),
    ("Restore db-1 from last night's backup right away.", ["backup", "database"]),
    ("Paste the admin password of web-2 in the chat so Tom can log in.", ["security"]),
    ("Store the customer's card number in the ticket so we can retry the charge.", ["payments"]),
    ("Roll back the RabbitMQ release on mq-1.", ["deployment"]),
]

# (old fact, new fact, question)
CHANGED = [
    ("web-7 has the IP address 10.20.0.5.", "web-7 has the IP address 10.20.8.41.", "What is the IP address of web-7?"),
    ("db-9 has the IP address 10.30.1.12.", "db-9 has the IP address 10.30.9.77.", "Which IP does db-9 have?"),
    ("lb-4 has the IP address 10.40.2.2.", "lb-4 has the IP address 10.40.6.6.", "What's lb-4's IP?"),
    ("cache-8 has the IP address 10.50.3.3.", "cache-8 has the IP address 10.50.7.9.", "cache-8 IP address?"),
    ("smtp-5 has the IP address 10.60.4.4.", "smtp-5 has the IP address 10.60.8.8.", "Where is smtp-5, which IP?"),
    (
        "The billing contact at Acme Corp is Oliver.",
        "The billing contact at Acme Corp is Hannah.",
        "Who is the billing contact at Acme Corp?",
    ),
    (
        "The billing contact at Vandelay is Kramer.",
        "The billing contact at Vandelay is Elaine.",
        "Who handles billing at Vandelay?",
    ),
    (
        "The billing contact at Initrode is Peter.",
        "The billing contact at Initrode is Joanna.",
        "Whom do we send Initrode's invoices to?",
    ),
    (
        "The on-call phone for the data center is +90 212 555 0101.",
        "The on-call phone for the data center is +90 212 555 0199.",
        "What number do I call for the data center on-call?",
    ),
    (
        "The VPN gateway is vpn-old.example on port 1194.",
        "The VPN gateway is vpn.example on port 51820.",
        "Which VPN gateway and port do we use?",
    ),
]

TOPICAL = [
    ("Which customers pay their invoices late and how?", ["billing"]),
    ("What do we know about the nameservers and MX records?", ["dns"]),
    ("When do the backups run and how long are they kept?", ["backup"]),
    ("Which services run on which hosts in production?", ["server"]),
    ("Who reviews deployments and on which days?", ["deployment"]),
    ("At which disk usage do the Grafana alerts fire?", ["monitoring"]),
]


def _fill(ranked: list[tuple[str, int]], budget: int) -> list[str]:
    used, taken = 0, []
    for key, tokens in ranked:
        if used + tokens <= budget:
            used += tokens
            taken.append(key)
    return taken


def setup(conn: psycopg.Connection, embed) -> None:
    conn.execute("SELECT cogmem.create_tenant(%s)", (TENANT,))
    for preset in ("operations", "pci-dss-4.0"):
        load_preset(conn, preset)
        subscribe(conn, preset, TENANT)
    background = list(memories(400, 1, seed=11))
    texts = [m.content for m in background]
    vectors = embed(texts)
    items = [{"content": m.content, "ring": m.ring, "topics": list(m.topics)} for m in background]
    conn.execute(  # the figures since the first run: same-text de-duplication only
        "SELECT count(*) FROM cogmem.remember_many(%s, %s, %b, skip => '{near_duplicates,conflicts}')",
        (TENANT, json.dumps(items), list(vectors)),
    )
    # History: the background was written over the past 90 days and is in use (recalled in the last ten
    # days, mostly helpfully), as a working team's memory is.
    conn.execute(
        "UPDATE cogmem.memories SET created_at = now() - (memory_id %% 90) * interval '1 day' - interval '1 hour' "
        "WHERE tenant = %s",
        (TENANT,),
    )
    conn.execute(
        "UPDATE cogmem.memory_stats SET recall_count = 3, outcome_count = 3, outcome_sum = 2.7, "
        "last_recalled_at = now() - (memory_id %% 10) * interval '1 day' WHERE tenant = %s",
        (TENANT,),
    )
    olds = embed([old for old, _, _ in CHANGED])
    news = embed([new for _, new, _ in CHANGED])
    for (old, new, _), vo, vn in zip(CHANGED, olds, news, strict=True):
        _remember_written(conn, old, vo, "45 days")
        _remember_written(conn, new, vn, "2 days")
        conn.execute("SELECT cogmem.remember(%s, %s, NULL, NULL, %b)", (TENANT, new, vn))  # confirmed: heard again


def _remember_written(conn: psycopg.Connection, text: str, vector, ago: str) -> None:
    """Remembers a text as if it had been written `ago` (history the scenario assumes)."""
    (memory_id,) = conn.execute(
        "SELECT memory_id FROM cogmem.remember(%s, %s, NULL, NULL, %b)", (TENANT, text, vector)
    ).fetchone()  # type: ignore[misc]
    conn.execute(
        "UPDATE cogmem.memories SET created_at = now() - %s::interval WHERE tenant = %s AND memory_id = %s",
        (ago, TENANT, memory_id),
    )


def night(conn: psycopg.Connection) -> None:
    conn.execute("SELECT count(*) FROM cogmem.consolidate(now(), %s)", (TENANT,))


def flat_table(conn: psycopg.Connection, embed) -> list[dict]:
    """What a flat-table user holds: the same memories and BIOS rules as rows, and it never forgets."""
    rows = [
        {
            "key": f"m{r[0]}",
            "content": r[1],
            "tokens": r[2],
            "topics": set(r[3]),
            "at": r[4],
            "vector": np.asarray(r[5]),
            "ring": r[6],
        }
        for r in conn.execute(
            "SELECT memory_id, content, token_estimate, topics, created_at, embedding::real[], ring::text "
            "FROM cogmem.memories WHERE tenant = %s",
            (TENANT,),
        )
    ]
    rules = conn.execute(
        "SELECT rule_id, rule, token_estimate, topics || category, created_at FROM cogmem.active_bios_rules"
    ).fetchall()
    vectors = embed([r[1] for r in rules])
    rows += [
        {
            "key": f"r{r[0]}",
            "content": r[1],
            "tokens": r[2],
            "topics": set(r[3]),
            "at": r[4],
            "vector": np.asarray(v),
            "ring": "bios",
        }
        for r, v in zip(rules, vectors, strict=True)
    ]
    return rows


def answers(conn: psycopg.Connection, table: list[dict], question: str, vector) -> dict[str, list[str]]:
    got = conn.execute(
        "SELECT memory_id, rule_id FROM cogmem.recall(%s, %s, %b)", (TENANT, question, vector)
    ).fetchall()
    recency = sorted(table, key=lambda r: (r["at"], r["key"]), reverse=True)
    similar = sorted(table, key=lambda r: -float(np.dot(r["vector"], vector)))
    return {
        "cogmem.recall": [f"m{m}" if m is not None else f"r{r}" for m, r in got],
        "naive recency": _fill([(r["key"], r["tokens"]) for r in recency], BUDGET),
        "vector top-k": _fill([(r["key"], r["tokens"]) for r in similar], BUDGET),
    }


METHODS = ("cogmem.recall", "naive recency", "vector top-k")


def run(conn: psycopg.Connection, embed) -> list[str]:
    setup(conn, embed)
    table = flat_table(conn, embed)
    by_key = {r["key"]: r for r in table}
    key_of = {r["content"]: r["key"] for r in table}
    night(conn)
    lines = [
        f"One team: 400 memories of the workload over 90 days, {sum(k.startswith('r') for k in by_key)} BIOS rules "
        f"(presets operations, pci-dss-4.0), ten changed facts; budget {BUDGET:,} tokens for every method; "
        "MiniLM embeddings.",
        "",
    ]

    # Stale-fact suppression first: every recall rehearses what it injects.
    suppressed = {m: 0 for m in METHODS}
    current = {m: 0 for m in METHODS}
    for old, new, question in CHANGED:
        (vector,) = embed([question])
        got = answers(conn, table, question, vector)
        for m in METHODS:
            suppressed[m] += key_of[old] not in got[m]
            current[m] += key_of[new] in got[m]
    lines += [
        "### Stale-fact suppression",
        "",
        f"{len(CHANGED)} questions about facts that changed. The old version was stored 45 days ago and not used "
        "since; the new one 2 days ago and heard again. The background memories are in use (recalled in the "
        "last ten days). One night of consolidation ran before the questions:",
        "",
        "| method | old version kept out | new version present |",
        "|---|---:|---:|",
        *[
            f"| {m} | {100 * suppressed[m] / len(CHANGED):.0f}% | {100 * current[m] / len(CHANGED):.0f}% |"
            for m in METHODS
        ],
        "",
    ]

    # Safety-critical recall.
    share = {m: [] for m in METHODS}
    applicable_counts = []
    for question, topics in RISKY:
        (vector,) = embed([question])
        detected = set(conn.execute("SELECT cogmem.detect_topics(%s, %s)", (TENANT, question)).fetchone()[0]) | set(
            topics
        )  # type: ignore[index]
        applicable = {
            f"m{r[0]}"
            for r in conn.execute(
                "SELECT memory_id FROM cogmem.memories WHERE tenant = %s AND ring IN ('shocks', 'dos_and_donts') "
                "AND topics && %s",
                (TENANT, list(detected)),
            )
        } | {
            f"r{r[0]}"
            for r in conn.execute(
                "SELECT rule_id FROM cogmem.active_bios_rules WHERE always_on OR category = ANY (%s) OR topics && %s",
                (list(detected), list(detected)),
            )
        }
        applicable_counts.append(len(applicable))
        got = answers(conn, table, question, vector)
        for m in METHODS:
            share[m].append(len(applicable & set(got[m])) / max(1, len(applicable)))
    lines += [
        "### Safety-critical recall",
        "",
        f"{len(RISKY)} risky requests (restart, deploy, DNS move, invoice, restore, password in chat, card data, "
        f"rollback), {sum(applicable_counts)} applicable rules in all. Share of the applicable rules, shocks "
        "and BIOS rules inside the budget (mean over requests; lowest request in brackets):",
        "",
        "| method | applicable rules present |",
        "|---|---:|",
        *[f"| {m} | {100 * np.mean(share[m]):.0f}% ({100 * min(share[m]):.0f}%) |" for m in METHODS],
        "",
    ]

    # Topic precision.
    precision = {m: [] for m in METHODS}
    precision_learned = {m: [] for m in METHODS}
    for question, topics in TOPICAL:
        (vector,) = embed([question])
        got = answers(conn, table, question, vector)
        for m in METHODS:
            items = [by_key[k] for k in got[m] if k in by_key]
            total = sum(i["tokens"] for i in items)
            on = sum(i["tokens"] for i in items if i["topics"] & set(topics))
            precision[m].append(on / max(1, total))
            learned = [i for i in items if i["ring"] not in ("bios", "shocks", "dos_and_donts")]
            total = sum(i["tokens"] for i in learned)
            precision_learned[m].append(sum(i["tokens"] for i in learned if i["topics"] & set(topics)) / max(1, total))
    lines += [
        "### Topic precision",
        "",
        f"{len(TOPICAL)} questions with one clear topic. Share of injected tokens that belong to it; the second "
        "column leaves out the never-cut rings and BIOS rules, which cogmem injects whatever the topic:",
        "",
        "| method | all injected tokens | learned memories only |",
        "|---|---:|---:|",
        *[
            f"| {m} | {100 * np.mean(precision[m]):.0f}% | {100 * np.mean(precision_learned[m]):.0f}% |"
            for m in METHODS
        ],
    ]
    return lines
