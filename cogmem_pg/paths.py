"""Where the SQL, migrations and presets are: inside the wheel, or at the top of a source checkout."""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cogmem_pg cannot find its {name}/ directory next to {_PACKAGE}")


def sql_dir() -> Path:
    return _find("sql")


def migrations_dir() -> Path:
    return _find("migrations")


def presets_dir() -> Path:
    return _PACKAGE / "presets"


def routing_model_file() -> Path:
    """The inbound router's weights (bench/train_router.py writes them; the installer loads them)."""
    return _PACKAGE / "data" / "routing-model.json"


def routing_model_hash_file() -> Path:
    """The sha256 of routing_model_file(), pinned in the repository (sha256sum's format)."""
    return _PACKAGE / "data" / "routing-model.json.sha256"
