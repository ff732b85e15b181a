"""`cogmem dashboard`: the command's door. The pages themselves are tested in a browser in
tests/test_dashboard.py."""

import pytest
from click.testing import CliRunner

from cogmem_pg.cli import main


def test_beyond_loopback_it_will_not_start_without_a_token():
    result = CliRunner().invoke(
        main, ["--dsn", "host=/nonexistent", "dashboard", "--host", "0.0.0.0"], env={"COGMEM_DASHBOARD_TOKEN": ""}
    )
    assert result.exit_code == 2
    assert "without a token" in result.output and "COGMEM_DASHBOARD_TOKEN" in result.output


def test_on_loopback_it_needs_no_token_and_a_host_name_is_not_taken_for_loopback():
    from cogmem_pg.dashboard import DashboardError, is_loopback, require_token

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("dashboard.example") and not is_loopback("10.0.0.5")
    require_token("127.0.0.1", None)
    require_token("10.0.0.5", "a-token-of-24-characters")
    with pytest.raises(DashboardError, match="at least 16 characters"):
        require_token("10.0.0.5", "short")
    with pytest.raises(DashboardError, match="without a token"):
        require_token("dashboard.example", "")


def test_the_command_is_listed_and_says_what_it_does():
    result = CliRunner().invoke(main, ["dashboard", "--help"])
    assert result.exit_code == 0 and "read-only" in result.output and "--token" in result.output
