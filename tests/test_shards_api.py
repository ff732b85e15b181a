"""The suite's own API tests, run as they are through a PL/Proxy router (cogmem_pg/shards/).

Every test of the API modules below whose only fixtures are a connection and a tenant, and that reads no
table and calls no internal helper (the router has neither: an application reaches only the API), runs
here with a connection to the router instead of a database of its own. They must pass unchanged: same
rows, same errors (SQLSTATE, message, HINT). The router and its shards are new to this module, so
nothing another test loaded (a BIOS preset, a Gut release) is there, as in a test's own database."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import uuid

import psycopg
import pytest
from pgvector.psycopg import register_vector

from tests.test_shards import sharded_layout

API_MODULES = ("test_recall", "test_remember", "test_remember_many", "test_siblings", "test_guard", "test_episodes",
               "test_trust", "test_vault", "test_identity", "test_conflicts", "test_observe", "test_topics",
               "test_tenants", "test_erasure", "test_consolidation", "test_rehearsal", "test_contradiction",
               "test_redaction", "test_hostile", "test_audit_chain", "test_audit_views", "test_explain_recall",
               "test_bios", "test_gut", "test_routing", "test_markdown", "test_tenant_access",
               "test_restore", "test_scopes", "test_resources")  # fmt: skip
# A table or view (not a function call), or an internal helper: what only a single node has.
SINGLE_NODE_ONLY = re.compile(r"\b(FROM|JOIN|UPDATE|INTO|TABLE)\s+cogmem\.\w+\b(?!\s*\()|\bcogmem\._\w+", re.I)
# What changes every tenant's world (a global BIOS rule, a preset, a Gut release): on one node each test
# has a database of its own; through one router, these run after the tests that read a clean world.
GLOBAL_WRITE = re.compile(r"add_bios_rule\((?![^)]*tenant)|load_bios_preset|subscribe_bios|gut_release")
# Tests that qualify but run on one node only, and why.
NOT_THROUGH_THE_ROUTER = {
    # resolve_conflict by the conflict id alone: the router takes the tenant-first form (docs/scaling.md).
    "test_conflicts::test_recall_notes_open_conflicts_until_resolved",
    # bench/inbound.py, which it runs, counts rows of the memories table.
    "test_consolidation::test_duplicates_and_siblings_on_the_test_split",
}


def source(function, module, seen: set | None = None) -> str:
    """The source of FUNCTION and of the test helpers it calls (its module's or another test module's),
    however deep."""
    seen = set() if seen is None else seen
    seen.add(function.__name__)
    text = inspect.getsource(function)
    for name in function.__code__.co_names:
        called = getattr(module, name, None)
        if inspect.isfunction(called) and called.__module__.startswith("tests.") and name not in seen:
            text += source(called, sys.modules[called.__module__], seen)
    return text


def api_tests() -> list:
    """The qualifying tests, those that change every tenant's world last."""
    found = []
    for module_name in API_MODULES:
        module = importlib.import_module(f"tests.{module_name}")
        for name, test in vars(module).items():
            if not name.startswith("test_") or not inspect.isfunction(test):
                continue
            if f"{module_name}::{name}" in NOT_THROUGH_THE_ROUTER:
                continue
            if getattr(test, "pytestmark", None) or hasattr(test, "hypothesis"):
                continue  # parametrized tests have fixtures of their own
            text = source(test, module)
            parameters = set(inspect.signature(test).parameters)
            takes_the_database = "db" in parameters and parameters <= {"db", "tenant"}
            if takes_the_database and not SINGLE_NODE_ONLY.search(text):
                found.append((bool(GLOBAL_WRITE.search(text)), pytest.param(test, id=f"{module_name}::{name}")))
    return [param for _, param in sorted(found, key=lambda item: item[0])]


@pytest.fixture(scope="module")
def router():
    for layout in sharded_layout(port=5481):
        yield layout["router"]


def test_enough_of_the_suite_runs_through_the_router():
    assert len(api_tests()) >= 35


@pytest.mark.parametrize("test", api_tests())
def test_an_api_test_passes_through_the_router_as_on_one_node(router, test):
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(router, autocommit=True) as db:
        register_vector(db)
        db.execute("SELECT cogmem.create_tenant(%s)", (tenant,))
        given = {"db": db, "tenant": tenant}
        test(**{name: given[name] for name in inspect.signature(test).parameters})
