"""What each dashboard page reads: one SELECT per section, over the views people and BI tools already use.

A section may list several queries: the first that the connected role may read answers. An application
role reads memories under row-level security, a BI role only the aggregate views, an auditor only the
trail; a section none of whose queries the role may read says so instead of failing the page. Nothing here
writes: the connection is read-only (app.py), and every statement is a plain SELECT."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, get_args

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from cogmem_pg.types import Ring

# Chart windows: how far back the time series go. Recent activity is what an operator looks at, and the
# bound keeps every page's queries on an index range rather than the whole history.
DAYS = 30
NIGHTS = 60
TOP = 10


@dataclass(frozen=True)
class Denied:
    """A section not shown, and why: the role may not read it, or it could not be answered (the statement
    timeout, say). Shown as such in its place, never as an error page."""

    reason: str
    readable: bool = False

    @property
    def message(self) -> str:
        return f"Not available: {self.reason}" if self.readable else f"This role may not read this: {self.reason}"


async def rows(conn: psycopg.AsyncConnection, queries: tuple[str, ...], params: dict) -> list[dict] | Denied:
    """The rows of the first of QUERIES the role may read, or Denied naming what the last one lacked."""
    denied = Denied("?")
    for query in queries:
        try:
            async with conn.cursor(row_factory=dict_row) as cur:
                await cur.execute(query, params)
                return await cur.fetchall()
        except psycopg.errors.InsufficientPrivilege as exc:
            denied = Denied(exc.diag.message_primary or str(exc))
        except psycopg.errors.NoDataFound:  # explain_recall of a recall the role does not see
            return []
        except (psycopg.errors.QueryCanceled, psycopg.errors.UndefinedObject) as exc:
            return Denied(exc.diag.message_primary or str(exc), readable=True)
    return denied


async def read(pool: AsyncConnectionPool, sections: dict[str, tuple[str, ...]], params: dict) -> dict[str, Any]:
    """Every section of a page, each on a connection of its own, at once: a page takes as long as its
    slowest section, not their sum."""

    async def section(queries: tuple[str, ...]) -> list[dict] | Denied:
        async with pool.connection() as conn:
            return await rows(conn, queries, params)

    return dict(zip(sections, await asyncio.gather(*map(section, sections.values())), strict=True))


# --- Tenants ----------------------------------------------------------------------------------------------
RINGS = get_args(Ring)
LISTED = 200  # tenants listed, the largest first; the others are reached by name

TENANTS = {
    "tenants": (
        "SELECT tenant, created_at FROM cogmem.tenants ORDER BY tenant",
        "SELECT DISTINCT tenant, NULL::timestamptz AS created_at FROM cogmem.memory_census ORDER BY tenant",
    ),
    # Counted from the index on (tenant, ring) where the role reads memories; memory_census (which also
    # sums tokens and confidence over every row) for a BI role.
    "census": (
        """SELECT tenant, ring::text AS ring, count(*) AS memories
           FROM cogmem.memories GROUP BY tenant, ring ORDER BY tenant, ring""",
        "SELECT tenant, ring, memories FROM cogmem.memory_census ORDER BY tenant, ring",
    ),
    # Growth of what the largest tenants hold now, by the day it was first heard; the window's first day
    # carries what came before.
    "growth": (
        """WITH added AS (
               SELECT tenant, greatest(created_at::date, current_date - %(days)s) AS day, count(*) AS added
               FROM cogmem.memories GROUP BY 1, 2
           ), largest AS (
               SELECT tenant FROM added GROUP BY tenant ORDER BY sum(added) DESC, tenant LIMIT %(lines)s
           )
           SELECT l.tenant, d.day::date AS day,
                  sum(coalesce(a.added, 0)) OVER (PARTITION BY l.tenant ORDER BY d.day) AS memories
           FROM largest AS l
           CROSS JOIN generate_series(current_date - %(days)s, current_date, interval '1 day') AS d (day)
           LEFT JOIN added AS a ON a.tenant = l.tenant AND a.day = d.day::date
           ORDER BY 1, 2""",
    ),
    "last_night": (
        """SELECT n.tenant, n.night, n.finished_at,
                  (SELECT jsonb_object_agg(d.decision, d.memories ORDER BY d.decision)
                   FROM cogmem.consolidation_decisions AS d
                   WHERE d.tenant = n.tenant AND d.night = n.night AND d.memories > 0 AND d.decision <> 'protect')
                      AS decisions
           FROM (SELECT tenant, max(night) AS night FROM cogmem.consolidation_nights GROUP BY tenant) AS last
           INNER JOIN cogmem.consolidation_nights AS n ON n.tenant = last.tenant AND n.night = last.night""",
    ),
}

# --- One tenant -------------------------------------------------------------------------------------------
TENANT_EXISTS = (
    "SELECT tenant FROM cogmem.tenants WHERE tenant = %(tenant)s",
    "SELECT DISTINCT tenant FROM cogmem.memory_census WHERE tenant = %(tenant)s",
    "SELECT tenant FROM cogmem.audit_heads WHERE tenant = %(tenant)s",
)

TENANT = {
    "layers": (
        """SELECT layer::text AS layer, token_allocation, half_life::text AS half_life, never_cut
           FROM cogmem.tenant_layers WHERE tenant = %(tenant)s ORDER BY layer""",
    ),
    # Strength in tenths per ring, and the memories most used and nearest to being forgotten, in one pass.
    "memories": (
        """WITH o AS MATERIALIZED (
               SELECT memory_id, ring::text AS ring, left(content, 160) AS content, recall_count, success_score,
                      strength, reinforced
               FROM cogmem.memory_overview WHERE tenant = %(tenant)s
           )
           SELECT
               (SELECT coalesce(jsonb_agg(h ORDER BY h.ring, h.tenth), '[]') FROM (
                   SELECT ring, least(floor(strength * 10), 9)::int AS tenth, count(*) AS memories
                   FROM o GROUP BY 1, 2) AS h) AS strength,
               (SELECT coalesce(jsonb_agg(t), '[]') FROM (
                   SELECT memory_id, ring, content, recall_count, success_score, round(strength::numeric, 3) AS strength
                   FROM o WHERE recall_count > 0 ORDER BY recall_count DESC, memory_id LIMIT %(top)s) AS t) AS top,
               (SELECT coalesce(jsonb_agg(f), '[]') FROM (
                   SELECT memory_id, ring, content, recall_count, round(strength::numeric, 3) AS strength
                   FROM o WHERE strength < 1 ORDER BY strength, memory_id LIMIT %(top)s) AS f) AS fading""",
    ),
    # The Ebbinghaus curve of each decaying ring, as the night applies it.
    "decay": (
        """SELECT l.layer::text AS layer, d.day,
                  round(cogmem.strength(make_interval(days => d.day), l.half_life)::numeric, 4) AS strength
           FROM cogmem.tenant_layers AS l CROSS JOIN generate_series(0, 60, 2) AS d (day)
           WHERE l.tenant = %(tenant)s AND l.half_life IS NOT NULL ORDER BY l.layer, d.day""",
    ),
    "conflicts": (
        "SELECT conflict_id, content, conflicts_with, verdict, opened_at FROM cogmem.open_conflicts(%(tenant)s)",
    ),
    "candidates": (
        "SELECT memory_id, ring, content, probability, question, created_at FROM cogmem.pending_rules(%(tenant)s)",
    ),
}

# --- Recall -----------------------------------------------------------------------------------------------
# The window's recalls (for every tenant the role reaches, or the one asked for) are read and unnested once:
# per day, tokens per layer and the most injected memories.
RECALL = {
    "window": (
        """WITH r AS MATERIALIZED (
               SELECT tenant, created_at::date AS day, item_layers, item_tokens, item_memory_ids, tokens_used, outcome
               FROM cogmem.recalls
               WHERE created_at >= current_date - %(days)s AND (%(tenant)s::text IS NULL OR tenant = %(tenant)s)
           ), days AS (
               SELECT day, count(*) AS recalls, round(avg(tokens_used), 0) AS tokens,
                      round(avg(outcome)::numeric, 3) AS success, count(outcome) AS outcomes
               FROM r GROUP BY day
           ), items AS (
               -- One pass over the items: tokens per day and layer, and injections per memory.
               SELECT r.day, i.layer::text AS layer, r.tenant, i.memory_id, sum(i.tokens) AS tokens,
                      count(*) AS injected, grouping(r.day) AS per_memory
               FROM r CROSS JOIN LATERAL unnest(r.item_layers, r.item_tokens, r.item_memory_ids)
                   AS i (layer, tokens, memory_id)
               GROUP BY GROUPING SETS ((r.day, i.layer), (r.tenant, i.memory_id, i.layer))
           )
           SELECT
               (SELECT coalesce(jsonb_agg(d ORDER BY d.day), '[]') FROM days AS d) AS daily,
               (SELECT coalesce(jsonb_agg(b ORDER BY b.day, b.layer), '[]') FROM (
                   SELECT i.day, i.layer, round(i.tokens::numeric / d.recalls, 1) AS tokens
                   FROM items AS i INNER JOIN days AS d ON d.day = i.day WHERE i.per_memory = 0
               ) AS b) AS budget,
               (SELECT coalesce(jsonb_agg(t ORDER BY t.injected DESC, t.memory_id), '[]') FROM (
                   SELECT x.tenant, x.memory_id, x.layer, x.injected,
                          coalesce(left(m.content, 160), '(no longer held)') AS content
                   FROM (
                       SELECT tenant, memory_id, layer, injected FROM items
                       WHERE per_memory = 1 AND memory_id IS NOT NULL ORDER BY injected DESC, memory_id LIMIT %(top)s
                   ) AS x
                   LEFT JOIN cogmem.memories AS m ON m.tenant = x.tenant AND m.memory_id = x.memory_id
               ) AS t) AS injected""",
    ),
    # never_cut_overflow, ring by ring on the index of (tenant, ring): the view sums every memory of every
    # tenant to find the never-cut ones. The view answers a role that cannot read memories.
    "overflow": (
        """SELECT l.tenant, l.layer::text AS layer, m.memories, m.tokens, l.token_allocation AS allocation,
                  (m.tokens - l.token_allocation)::integer AS over
           FROM unnest(enum_range(NULL::cogmem.ring)) AS r (ring)
           INNER JOIN cogmem.tenant_layers AS l ON l.layer::text = r.ring::text
           CROSS JOIN LATERAL (
               SELECT count(*)::integer AS memories, sum(x.token_estimate)::integer AS tokens
               FROM cogmem.memories AS x WHERE x.tenant = l.tenant AND x.ring = r.ring
           ) AS m
           WHERE l.never_cut AND (%(tenant)s::text IS NULL OR l.tenant = %(tenant)s) AND m.tokens > l.token_allocation
           ORDER BY over DESC, l.tenant, l.layer""",
        """SELECT tenant, layer, memories, tokens, allocation, over FROM cogmem.never_cut_overflow
           WHERE %(tenant)s::text IS NULL OR tenant = %(tenant)s ORDER BY over DESC, tenant, layer""",
    ),
    "outcomes": (
        """SELECT tenant, recalls, explicit, implicit, abstained, explicit_success, implicit_success
           FROM cogmem.outcome_stats WHERE %(tenant)s::text IS NULL OR tenant = %(tenant)s ORDER BY tenant""",
    ),
}

# --- Nights -----------------------------------------------------------------------------------------------
# What each of a night's decisions means, and the lifecycle events that give its reasons (sql/090; "event:reason"
# where one event serves two decisions). Counted
# decisions log no event per memory: each follows from its count and the tenant's thresholds.
DECISIONS = {
    "merge": (("merged", "deleted:merged"), "near-duplicates merged into the older memory"),
    "reinforce": (("reinforced",), "recalled often and successfully: now exempt from decay"),
    "promote": (("promoted",), "proven in fresh: moved to a lasting ring"),
    "promote_candidate": (("candidate_promoted",), "candidate rules confirmed by use, moved to their never-cut ring"),
    "weaken": (("weakened",), "recalled but rarely useful: confidence lowered"),
    "forget": (("deleted:forgotten",), "unused for too long and below the confidence floor: deleted"),
    "review": (("conflicts_reviewed",), "overridden conflicts looked at again"),
    "fade": ((), "unused memories whose confidence stepped down (counted, not logged one by one)"),
    "expire": ((), "sensory turns past their time to live (counted)"),
    "protect": ((), "memories of never-cut rings, kept whatever their use (counted)"),
    "overflow": (("night_consolidated",), "never-cut memories beyond their ring's allocation"),
}
# The chart leaves out what every night repeats ("protect") and decisions that touched nothing; both read
# the decisions that touched something by night (index consolidation_decisions_night_idx).
_DECIDED = """SELECT night, decision, sum(memories) AS memories FROM cogmem.consolidation_decisions
              WHERE night >= current_date - %(nights)s AND memories > 0 AND decision <> 'protect'
                AND (%(tenant)s::text IS NULL OR tenant = %(tenant)s)
              GROUP BY 1, 2"""
NIGHTS_PAGE = {
    "decisions": (f"{_DECIDED} ORDER BY 1, 2",),
    "nights": (
        f"""WITH n AS (
                SELECT night, count(*) AS tenants, max(finished_at - started_at) AS took
                FROM cogmem.consolidation_nights
                WHERE night >= current_date - %(nights)s AND (%(tenant)s::text IS NULL OR tenant = %(tenant)s)
                GROUP BY night
            ), d AS ({_DECIDED})
            SELECT n.night, n.tenants, n.took,
                   (SELECT jsonb_object_agg(d.decision, d.memories ORDER BY d.decision) FROM d WHERE d.night = n.night)
                       AS decisions
            FROM n ORDER BY n.night DESC""",
    ),
}

# One night's decisions with their reasons: the lifecycle events the night wrote, at its as_of (logged no
# earlier than it, which bounds the partitions read).
NIGHT = {
    "counts": (
        """SELECT tenant, decision, memories FROM cogmem.consolidation_decisions
           WHERE night = %(night)s AND memories > 0 AND (%(tenant)s::text IS NULL OR tenant = %(tenant)s)
             AND (%(decision)s::text IS NULL OR decision = %(decision)s)
           ORDER BY memories DESC, tenant, decision LIMIT 500""",
    ),
    "events": (
        """SELECT l.tenant, l.event, l.memory_id, l.detail
           FROM cogmem.consolidation_nights AS n
           JOIN cogmem.audit_lifecycle AS l ON l.tenant = n.tenant AND l.at = n.as_of AND l.logged_at >= n.as_of
           WHERE n.night = %(night)s AND (%(tenant)s::text IS NULL OR n.tenant = %(tenant)s)
             AND (l.event = ANY (%(events)s)
                  OR l.event || ':' || coalesce(l.detail ->> 'reason', '') = ANY (%(events)s))
             AND (l.event <> 'night_consolidated' OR (l.detail ->> 'overflow')::integer > 0)
           ORDER BY l.tenant, l.event, l.memory_id NULLS FIRST LIMIT 500""",
    ),
}

# --- Audit ------------------------------------------------------------------------------------------------
AUDIT = {
    # The head of each tenant's chain, found tenant by tenant on the chain's key (audit_heads reads every
    # row of every chain to find them).
    "heads": (
        """WITH RECURSIVE chained (tenant) AS (
               (SELECT tenant FROM cogmem.audit_chain ORDER BY tenant LIMIT 1)
               UNION ALL
               SELECT (SELECT c.tenant FROM cogmem.audit_chain AS c WHERE c.tenant > chained.tenant
                       ORDER BY c.tenant LIMIT 1)
               FROM chained WHERE chained.tenant IS NOT NULL
           )
           SELECT h.tenant, h.seq, encode(h.row_hash, 'hex') AS head_sha256, h.sealed_at, count(*) OVER () AS chains
           FROM chained
           CROSS JOIN LATERAL (
               SELECT c.tenant, c.seq, c.row_hash, c.sealed_at FROM cogmem.audit_chain AS c
               WHERE c.tenant = chained.tenant ORDER BY c.seq DESC LIMIT 1
           ) AS h
           ORDER BY h.sealed_at DESC, h.tenant LIMIT %(listed)s""",
    ),
    "seal": ("SELECT horizon::text AS horizon, sealed_at FROM cogmem.audit_seal_state",),
    "unsealed": (
        """SELECT l.tenant, count(*) AS unsealed FROM cogmem.audit_log AS l
           WHERE l.xid >= (SELECT horizon FROM cogmem.audit_seal_state)
             AND NOT EXISTS (SELECT FROM cogmem.audit_chain AS c WHERE c.tenant = l.tenant AND c.audit_id = l.audit_id)
           GROUP BY l.tenant ORDER BY l.tenant""",
    ),
    "archives": (
        """SELECT partition_name, range_from, range_to, rows, exported_to, exported_at, dropped_at
           FROM cogmem.audit_archives ORDER BY range_from""",
    ),
    "erasures": (
        """SELECT tenant, at, actor, detail FROM cogmem.audit_governance
           WHERE event = 'erasure_requested' ORDER BY at DESC LIMIT 50""",
    ),
    # From the trail's recent partitions where the role reads it; audit_daily (every day) for a BI role.
    "daily": (
        """SELECT (at AT TIME ZONE 'UTC')::date AS day, level, count(*) AS events FROM cogmem.audit_log
           WHERE logged_at >= current_date - %(days)s AND at >= current_date - %(days)s
           GROUP BY 1, 2 ORDER BY 1, 2""",
        """SELECT day, level, sum(events) AS events FROM cogmem.audit_daily
           WHERE day >= current_date - %(days)s GROUP BY 1, 2 ORDER BY 1, 2""",
    ),
}
VERIFY = {"verify": ("SELECT tenant, ok, rows_checked, first_bad_id FROM cogmem.verify_audit(%(tenant)s)",)}
VERIFY_GLOBAL = {
    "verify": ("SELECT tenant, ok, rows_checked, first_bad_id FROM cogmem.verify_audit() WHERE tenant = '*'",),
}
EXPLAIN = {
    "explain": (
        """SELECT item, layer, memory_id, rule_id, score, tokens, reason, provenance, history, outcomes
           FROM cogmem.explain_recall(%(recall)s)""",
    ),
}

# --- Gut --------------------------------------------------------------------------------------------------
GUT = {
    "ledger": (
        """SELECT period_start::date AS period, budget, spent, remaining, releases, published, withdrawn
           FROM cogmem.gut_ledger ORDER BY period_start""",
    ),
    "settings": (
        "SELECT k, epsilon_per_period, period::text AS period, delta, mechanism, max_patterns_per_tenant"
        " FROM cogmem.gut_settings",
    ),
    "patterns": (
        """SELECT pattern_id, content, topics, support, success,
                  round(success_low::numeric, 2) || ' to ' || round(success_high::numeric, 2) AS interval,
                  first_release, last_release
           FROM cogmem.gut_patterns WHERE withdrawn_release IS NULL ORDER BY support DESC, pattern_id LIMIT 100""",
    ),
}

# --- BIOS -------------------------------------------------------------------------------------------------
BIOS = {
    "coverage": (
        """SELECT preset, category, rules, must, should, always_on, in_turkish, taken_by
           FROM cogmem.bios_coverage ORDER BY preset, category""",
    ),
    "subscriptions": (
        """SELECT preset, coalesce(tenant, 'every tenant') AS tenant, subscribed_at
           FROM cogmem.bios_subscriptions ORDER BY preset, tenant NULLS FIRST""",
    ),
}
