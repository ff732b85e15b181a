"""cogmem_pg.cli (the package's __init__): the command tree, whole, and how its modules import one another.
The commands themselves are tested in tests/test_cli_<module>.py, one file per module of the package."""

import ast
import subprocess
import sys
from pathlib import Path

import click

from cogmem_pg import cli
from cogmem_pg.cli import main

PACKAGE = Path(cli.__file__).parent
COMMAND_MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__", "common"))


def test_the_command_modules_are_the_ones_main_takes():
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in cli.MODULES) == COMMAND_MODULES
    assert COMMAND_MODULES == [
        "app_verbs", "audit", "bios", "cluster", "conflicts", "dashboard", "erasure", "experiments", "guard", "gut",
        "memory", "resources", "sessions", "shards", "store", "tenants", "vault",
    ]  # fmt: skip


def _imports(name: str) -> set[str]:
    """The modules a module of the package imports, `from cogmem_pg import cli` as cogmem_pg.cli."""
    tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
    found = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module:
            found |= {n.module} | {f"{n.module}.{a.name}" for a in n.names if n.module.startswith("cogmem_pg")}
    return found


def test_no_module_of_the_package_imports_its_init():
    # The command modules take what they share from common.py; main (in __init__) takes their COMMANDS.
    for name in [*COMMAND_MODULES, "common"]:
        within = {m for m in _imports(name) if m == "cogmem_pg.cli" or m.startswith("cogmem_pg.cli.")}
        if name == "common":
            assert within == set()
        else:
            assert within and all(
                m == "cogmem_pg.cli.common" or m.startswith("cogmem_pg.cli.common.") for m in within
            ), (name, within)


def test_each_module_imports_alone_in_a_fresh_interpreter():
    for name in [*COMMAND_MODULES, "common"]:
        done = subprocess.run([sys.executable, "-c", f"import cogmem_pg.cli.{name}"], capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr)


def _commands_below(group: click.Group) -> list[click.Command]:
    found = []
    for command in group.commands.values():
        found.append(command)
        if isinstance(command, click.Group):
            found += _commands_below(command)
    return found


def test_every_command_a_module_defines_is_reachable_from_main():
    reachable = _commands_below(main)
    for module in cli.MODULES:
        defined = [v for v in vars(module).values() if isinstance(v, click.Command)]
        assert defined and all(any(c is r for r in reachable) for c in defined), module.__name__
    # ... and each once: every command lives in exactly one module
    owners = [m for c in reachable for m in cli.MODULES if any(c is v for v in vars(m).values())]
    assert len(owners) == len(reachable)


# Public SQL functions the client and the command line leave out on purpose; docs/ says why.
NOT_WRAPPED = {
    "caller", "caller_roles", "reachable_tenants", "reaches_every_tenant", "narrowed_reach",  # what the policies ask
    "may_use_vault", "in_scope",  # ... and the scope rule reads use
    "chunk_text",  # what SQL computes with; chunk_resource is the tenant's
    "embed", "embedding_dimensions", "strength",  # what SQL computes with; the client embeds itself
    "clauses",  # what Client.remember asks before it embeds a message's parts (remember's clause_embeddings)
    "restore_memory_stats", "restore_siblings", "restore_episode",  # `cogmem import` calls them
    "audit_partitions_ensure", "audit_apply_retention", "audit_mark_exported",  # pg_cron, `cogmem audit export`
    "schedule_nightly", "schedule_audit", "schedule_gut", "schedule_rehearsals",  # installed by migrate
    "unschedule_nightly", "unschedule_audit", "unschedule_gut", "unschedule_rehearsals",
    "gut_export", "gut_state", "gut_import",  # what a sharded router's gut_release calls
}  # fmt: skip
CLIENT_NAMES = {
    "gut_patterns_for": "gut_patterns",
    "store_delete": "store_delete",
    "apply_rehearsals": "apply_rehearsals",
    # Client.reembed runs a re-embedding's steps, batch by batch
    **{f"reembed_{step}": "reembed" for step in ("begin", "pending", "put", "finish", "progress")},
}
COMMANDS = {
    "acknowledge": "guard ack", "add_bios_rule": "bios add", "analyze": "analyze", "apply_rehearsals": "rehearse",
    "attention": "classify", "bios_preset_diff": "bios diff", "briefing": "briefing", "briefing_text": "briefing",
    "classify": "classify", "configure_tenant": "configure", "consolidate": "consolidate", "contradicts": "related",
    "core_identity": "identity", "create_tenant": "tenant", "detect_topics": "topics detect",
    "end_session": "session end", "erase": "erase", "erase_subject": "erase-subject", "erase_person": "erase-person",
    "add_resource": "resource add", "chunk_resource": "resource chunks", "retire_resource": "resource retire",
    "explain_recall": "audit explain", "feedback": "feedback", "grant_tenant": "grant", "guard_check": "guard check",
    "gut_configure": "gut opt-in", "gut_deidentify": "classify", "gut_patterns_for": "gut patterns",
    "gut_release": "gut release", "load_bios_preset": "bios load", "observe": "observe",
    "open_conflicts": "conflicts list", "polarity": "classify", "recall": "recall", "redact": "classify",
    "related": "related", "remember": "remember", "remember_many": "remember-many", "report_error": "guard report",
    "resolve_conflict": "conflicts resolve", "retire_bios_rule": "bios retire", "revoke_tenant": "revoke",
    "route": "classify", "seal_audit": "audit seal", "server_can_embed": "doctor", "set_core_identity": "identity",
    "set_topic": "topics set", "siblings": "siblings", "start_session": "session start", "store_delete": "store rm",
    "store_get": "store get", "store_namespaces": "store ls", "store_put": "store put",
    "store_search": "store search", "store_sweep": "store sweep", "subscribe_bios": "bios subscribe",
    "topic_keywords": "topics list",
    "trust": "trust", "trust_event": "trust", "unsubscribe_bios": "bios unsubscribe", "vault_delete": "vault rm",
    "vault_get": "vault get", "vault_list": "vault list", "vault_put": "vault put", "verify_audit": "audit verify",
    "pending_rules": "rules pending", "confirm_ring": "rules confirm", "dismiss_candidate": "rules dismiss",
    "judge_followup": "judge", "judge_recall": "judge-recall",
    "experiment_create": "experiment create", "experiment_status": "experiment status",
    "experiment_stop": "experiment stop", "experiment_adopt": "experiment adopt",
    "experiment_report": "experiment report",
    "get_memory": "memory get", "list_memories": "memory list", "update_memory": "memory update",
    "delete_memory": "memory delete", "memory_history": "memory history", "tenant_indexes": "index-tenants",
    **{f"reembed_{step}": "reembed" for step in ("begin", "pending", "put", "finish", "progress", "cancel")},
}  # fmt: skip


def test_every_public_sql_function_has_a_client_method_and_a_command_or_a_reason(db):
    from cogmem_pg.client import Client

    public = {
        r[0]
        for r in db.execute(
            "SELECT p.proname FROM pg_proc AS p WHERE p.pronamespace = 'cogmem'::regnamespace AND p.proname !~ '^_' "
            "AND p.prorettype <> 'trigger'::regtype AND p.prokind = 'f'"
        )
    }
    assert public - NOT_WRAPPED == set(COMMANDS), "a new public function needs a client method and a command"
    for function in COMMANDS:
        assert hasattr(Client, CLIENT_NAMES.get(function, function)), function
        group: click.Command = main
        for word in COMMANDS[function].split():
            assert isinstance(group, click.Group) and word in group.commands, (function, COMMANDS[function])
            group = group.commands[word]
    root = Path(__file__).resolve().parents[1]
    docs = "".join(p.read_text(encoding="utf-8") for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    for function in NOT_WRAPPED:
        assert f"`{function}`" in docs, f"the docs must say why {function} has no client method or command"
