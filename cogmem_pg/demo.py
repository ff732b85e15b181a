"""The story cogmem-pg exists for: a rule said on Monday is there when it matters on Wednesday."""

from __future__ import annotations

from collections.abc import Callable

from cogmem_pg.bios import counts, load_preset
from cogmem_pg.client import Client
from cogmem_pg.render import render_recall

TENANT = "acme"

MONDAY = [
    (
        "Never restart the servers at night, it broke checkout last time.",
        {"who": "ayse", "channel": "slack", "conversation": "ops-monday"},
    ),
    (
        "Invoices for Acme go out on the 1st of each month; the billing contact is Maria in finance.",
        {"who": "maria", "channel": "email", "conversation": "billing-monday"},
    ),
    (
        "The acme.example DNS zone is hosted at the registrar; the MX record points to mail.acme.example.",
        {"who": "can", "channel": "ticket", "conversation": "dns-monday"},
    ),
    (
        "Outage in March: db-1 ran out of disk and the shop was down for 2 hours; customers could not check out.",
        {"who": "can", "channel": "postmortem", "conversation": "incident-2026-03"},
    ),
    (
        "To rotate the web servers: 1. drain the node from the load balancer 2. restart nginx 3. check health.",
        {"who": "ayse", "channel": "wiki", "conversation": "runbook"},
    ),
    (
        "Refunds over 500 EUR need a second approval from finance.",
        {"who": "maria", "channel": "email", "conversation": "billing-monday"},
    ),
]
WEDNESDAY = "Let's open a maintenance window tonight and restart the servers"


def _night(client: Client) -> str:
    """The night's consolidation, and the audit trail sealed into its hash chain."""
    with client.connection() as conn:
        decided = conn.execute(
            "SELECT decision, memories FROM cogmem.consolidate(now(), %s) WHERE memories > 0 ORDER BY decision",
            (TENANT,),
        ).fetchall()
        (sealed,) = conn.execute("SELECT cogmem.seal_audit()").fetchone() or (0,)
    done = ", ".join(f"{decision} {memories}" for decision, memories in decided) or "already consolidated tonight"
    return f"{done}; {sealed} audit rows sealed into the hash chain"


def run_demo(dsn: str, echo: Callable[[str], None] = print) -> int:
    with Client(dsn) as client:
        client.create_tenant(TENANT)
        with client.connection() as conn:
            for preset in ("operations", "pci-dss-4.0"):
                loaded, changes = load_preset(conn, preset)
                client.subscribe_bios(loaded.name, TENANT, conn=conn)
                echo(
                    f"BIOS preset {loaded.title}: {counts(changes)['add']} new of {len(loaded.rules)} rules, "
                    f"taken by {TENANT!r}"
                )
        echo(f"\nMonday, tenant {TENANT!r} hears:")
        for text, source in MONDAY:
            memory = client.remember(TENANT, text, source=source)
            held = f"conflict #{memory.conflict_id}" if memory.memory_id is None else f"#{memory.memory_id:<4}"
            echo(f"  {memory.action:9} {held} {memory.ring:14} {','.join(memory.topics):22} {text}")

        echo(f"\nWednesday, someone else says: {WEDNESDAY!r}\n")
        result = client.recall(TENANT, WEDNESDAY, conversation="ops-wednesday")
        echo(render_recall(result, 3200))

        contents = [i.content for i in result.items]
        checks = [
            # Said in a conversation, it is shown with its date: "[2026-12-01] Never restart ...".
            ("the Monday rule is recalled", any(c.endswith(MONDAY[0][0]) for c in contents)),
            (
                "a BIOS rule asks for a config test before restart",
                any(i.layer == "bios" and "config check" in i.content for i in result.items),
            ),
            (
                "no billing memory is injected by relevance",
                not any(
                    "Invoices" in i.content or "Refunds" in i.content for i in result.items if i.layer != "candidates"
                ),
            ),
            # A rule the router was not sure of waits for a person, shown in every recall until then.
            (
                "the unconfirmed refund rule is shown as a candidate",
                any(i.layer == "candidates" and "Refunds" in i.content for i in result.items),
            ),
            ("the budget holds", result.tokens <= 3200),
        ]
        echo("")
        for label, ok in checks:
            echo(f"  {'✓' if ok else '✗'} {label}")
        credited = client.feedback(result.recall_id, 1.0) if result.recall_id else 0
        echo(f"\nfeedback 1.0 credited {credited} memories of recall {result.recall_id}")
        echo(f"\nThat night: {_night(client)}")
    return 0 if all(ok for _, ok in checks) else 1
