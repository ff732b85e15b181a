"""cogmem_pg.cli.experiments: experiment create, status, report, stop and adopt."""

import json

import psycopg

from tests.cli_helpers import invoke, run


def feedback(dsn: str, tenant: str, outcome: float, times: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for _ in range(times):
            (recall_id,) = conn.execute(
                "SELECT recall_id FROM cogmem.recall(%s, 'invoices') LIMIT 1", (tenant,)
            ).fetchone()
            conn.execute("SELECT cogmem.feedback(%s, %s::real)", (recall_id, outcome))


def test_an_experiment_from_start_to_adoption(dsn):
    names = [f"t{i}" for i in range(8)]
    for t in names:
        run("--dsn", dsn, "tenant", t)
        run("--dsn", dsn, "remember", t, "Invoices are sent on the first working day", "--ring", "fresh")
    enrol = [a for t in names for a in ("--tenant", t)]
    out = run("--dsn", dsn, "experiment", "create", "promote", "promote_min_recalls", "[2, 5]", *enrol)
    assert out == "experiment promote: promote_min_recalls in [2, 5] over 8 tenants (arm 1: 4, arm 2: 4)\n"
    status = run("--dsn", dsn, "experiment", "status")
    assert status.startswith("promote                  running  promote_min_recalls [2, 5] by tenant, success_rate")
    assert run("--dsn", dsn, "experiment", "report", "promote") == (
        "arm 1 (2): no observations yet\narm 2 (5): no observations yet\nverdict: too few tenants yet: arm 1 has 0,"
        " arm 2 has 0; a verdict needs 4 an arm, as the spread between fewer tells too little of how far arms differ"
        " by chance\n"
    )

    with psycopg.connect(dsn) as conn:
        arms = dict(conn.execute("SELECT tenant, arm FROM cogmem.experiment_tenants").fetchall())
    for t, arm in arms.items():
        feedback(dsn, t, 1.0 if arm == 2 else 0.0, 5)
    report = run("--dsn", dsn, "experiment", "report", "promote").splitlines()
    assert report[0].startswith("arm 1 (2): 0.000 [") and "units 4  observations 20" in report[0]
    assert report[1].startswith("arm 2 (5): 1.000 [")
    assert report[2].startswith("verdict: arm 2 (promote_min_recalls = 5) is better (since ")
    rows = [json.loads(line) for line in run("--dsn", dsn, "experiment", "report", "promote", "--json").splitlines()]
    assert [(r["arm"], r["estimate"]) for r in rows] == [(1, 0.0), (2, 1.0)]

    out = run("--dsn", dsn, "experiment", "adopt", "promote", "2")
    assert out == "experiment promote: promote_min_recalls = 5 set for 8 tenants\n"
    adopted = json.loads(run("--dsn", dsn, "experiment", "status", "promote", "--json"))
    assert (adopted["state"], adopted["adopted_arm"]) == ("adopted", 2)


def test_refusals_name_the_problem(dsn):
    run("--dsn", dsn, "tenant", "a")
    run("--dsn", dsn, "tenant", "b")
    result = invoke("--dsn", dsn, "experiment", "create", "x", "turn_never_cut_probability", "[0.5, 0.9]")
    assert result.exit_code == 1
    assert "setting turn_never_cut_probability may not be experimented on (22023)" in result.output
    assert "HINT: Experiments never change never-cut or BIOS behaviour" in result.output
    result = invoke("--dsn", dsn, "experiment", "create", "x", "fusion_k", "[5, 40")
    assert result.exit_code == 2 and "not JSON" in result.output
    run("--dsn", dsn, "experiment", "create", "x", "fusion_k", "[5, 40]", "--unit", "session")
    assert run("--dsn", dsn, "experiment", "stop", "x").startswith("experiment x stopped at ")
    result = invoke("--dsn", dsn, "experiment", "stop", "x")
    assert result.exit_code == 1 and "(55000)" in result.output
