"""The embedded default: a private PostgreSQL cluster under .cogmem/, reachable only by Unix socket.

Used when no DATABASE_URL is given. It preloads pg_cron and, when PostgreSQL's Python matches this
one, puts this environment's packages (or a copy the server's user can read) on the server's PYTHONPATH
so cogmem.embed() works in SQL.
PostgreSQL refuses to run as root: as root, the cluster runs as the ``postgres`` system user.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import psycopg

DEFAULT_HOME = ".cogmem"
DEFAULT_PORT = 5432  # only names the socket file: the cluster listens on no TCP address
DATABASE = "cogmem"
SUPERUSER = "postgres"


class ClusterError(RuntimeError):
    pass


def pg_bindir() -> Path:
    """The newest installed PostgreSQL server's bin directory (PG_BINDIR overrides)."""
    if os.environ.get("PG_BINDIR"):
        return Path(os.environ["PG_BINDIR"])
    candidates = sorted(
        (p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "postgres").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if candidates:
        return candidates[-1]
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    raise ClusterError("no PostgreSQL server found: run `make setup` (scripts/setup.sh) first")


def _server_python_version(bindir: Path) -> str | None:
    """The Python version PL/Python links against, e.g. '3.11', read from plpython3.so."""
    try:
        libdir = subprocess.run(
            [str(bindir / "pg_config"), "--pkglibdir"], capture_output=True, text=True, check=True
        ).stdout.strip()
        out = subprocess.run(["ldd", f"{libdir}/plpython3.so"], capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    match = re.search(r"libpython(\d+\.\d+)", out)
    return match.group(1) if match else None


def _server_distributions() -> list[metadata.Distribution]:
    """The installed distributions that the server's Python needs (the [embed] and [gut] extras), with
    their own requirements."""
    try:
        from packaging.requirements import Requirement
    except ImportError:  # no packaging, no onnxruntime: nothing to embed with
        return []
    try:
        wanted = [
            Requirement(r)
            for r in metadata.distribution("cogmem-pg").requires or []
            if "extra" in r and any(Requirement(r).marker.evaluate({"extra": e}) for e in ("embed", "gut"))  # type: ignore[union-attr]
        ]
    except metadata.PackageNotFoundError:
        return []
    found: dict[str, metadata.Distribution] = {}
    while wanted:
        requirement = wanted.pop()
        key = requirement.name.lower().replace("_", "-")
        if key in found:
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = dist
        for r in dist.requires or []:
            nested = Requirement(r)
            if nested.marker is None or nested.marker.evaluate({"extra": ""}):
                wanted.append(nested)
    return list(found.values())


def _link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def copy_embedding_packages(target: Path) -> Path:
    """Copies cogmem_pg and what its [embed] and [gut] extras need into ``target`` (hard links where possible).

    For a server that cannot read this environment. A stamp of the versions (and of cogmem_pg's own
    sources) makes a second call a no-op until something changes.
    """
    import cogmem_pg

    package = Path(cogmem_pg.__file__).resolve().parent
    dists = sorted(_server_distributions(), key=lambda d: d.metadata["Name"].lower())
    # The modules, and the data the Gut's release reads in the server (its keys' language means).
    sources = [*sorted(package.glob("*.py")), package / "data" / "gut-language-means.json"]
    stamp = hashlib.sha256(
        "\n".join([f"{d.metadata['Name']}=={d.version}" for d in dists] + [p.read_text() for p in sources]).encode()
    ).hexdigest()
    stamp_file = target / ".cogmem-stamp"
    if stamp_file.is_file() and stamp_file.read_text() == stamp:
        return target
    shutil.rmtree(target, ignore_errors=True)
    for dist in dists:
        for file in dist.files or []:
            if file.parts and file.parts[0] != "..":  # scripts live outside site-packages
                source = Path(str(dist.locate_file(file)))
                if source.is_file():
                    _link_or_copy(source, target / file)
    for source in sources:
        _link_or_copy(source, target / "cogmem_pg" / source.relative_to(package))
    for directory in [target, *target.rglob("*")]:
        if directory.is_dir():
            directory.chmod(0o755)
    stamp_file.write_text(stamp)
    return target


def _others_can_traverse(path: Path) -> bool:
    """True when every directory from / to ``path`` is searchable by other users."""
    for directory in [path, *path.parents]:
        try:
            if not directory.stat().st_mode & stat.S_IXOTH:
                return False
        except FileNotFoundError:
            continue
    return True


@dataclass
class Cluster:
    home: Path
    port: int = DEFAULT_PORT
    settings: dict[str, str] = field(default_factory=dict)  # extra postgresql.conf lines, e.g. for tests
    # False starts the server with its own Python only, as an ordinary server is (tests of that case).
    server_python: bool = True

    @classmethod
    def default(cls) -> Cluster:
        """COGMEM_HOME, else ./.cogmem; as root, a directory the postgres user can reach."""
        if os.environ.get("COGMEM_HOME"):
            home = Path(os.environ["COGMEM_HOME"]).resolve()
        else:
            home = Path(DEFAULT_HOME).resolve()
            if os.geteuid() == 0 and not _others_can_traverse(home.parent):
                # e.g. a checkout under /root (mode 0700): the server's user could not reach .cogmem there.
                digest = hashlib.sha256(str(home).encode()).hexdigest()[:12]
                home = Path("/var/lib/cogmem-pg") / digest
        return cls(home=home, port=int(os.environ.get("COGMEM_PORT", DEFAULT_PORT)))

    @property
    def datadir(self) -> Path:
        return self.home / "pgdata"

    @property
    def socketdir(self) -> Path:
        return self.home / "run"

    @property
    def logfile(self) -> Path:
        return self.home / "postgresql.log"

    def dsn(self, dbname: str = DATABASE) -> str:
        return f"host={self.socketdir} port={self.port} user={SUPERUSER} dbname={dbname}"

    # -- running commands as the cluster's owner ---------------------------------------------------
    def _owner(self) -> pwd.struct_passwd | None:
        """The system user that runs the server when we are root, else None (run as ourselves)."""
        if os.geteuid() != 0:
            return None
        try:
            return pwd.getpwnam("postgres")
        except KeyError as exc:
            raise ClusterError("running as root needs the 'postgres' system user (apt install postgresql)") from exc

    def _run(self, args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        owner = self._owner()
        command = args if owner is None else ["runuser", "-u", owner.pw_name, "--", *args]
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            raise ClusterError(f"{Path(args[0]).name} failed ({result.returncode}): {result.stderr.strip()}")
        return result

    # -- state -----------------------------------------------------------------------------------------
    def initialized(self) -> bool:
        return (self.datadir / "PG_VERSION").exists()

    def running(self) -> bool:
        pidfile = self.datadir / "postmaster.pid"
        if not pidfile.exists():
            return False
        try:
            pid = int(pidfile.read_text().splitlines()[0])
            os.kill(pid, 0)
        except (ValueError, IndexError, ProcessLookupError):
            return False
        except PermissionError:
            return True
        return True

    def server_python_path(self) -> str | None:
        """PYTHONPATH for the server when its Python matches ours, so cogmem.embed() works in SQL.

        The server runs as the ``postgres`` user when we are root. Where that user cannot read this
        environment (a checkout under /root), it gets a copy of what embedding needs under the cluster's
        home instead (refreshed when a version changes).
        """
        version = _server_python_version(pg_bindir())
        if version != f"{sys.version_info.major}.{sys.version_info.minor}":
            return None
        import cogmem_pg

        entries = [
            sysconfig.get_paths()["purelib"],
            sysconfig.get_paths()["platlib"],
            str(Path(cogmem_pg.__file__).resolve().parents[1]),
        ]
        if self._owner() is None or all(_others_can_traverse(Path(e)) for e in entries):
            return os.pathsep.join(dict.fromkeys(entries))
        return str(copy_embedding_packages(self.home / "server-python"))

    # -- lifecycle -------------------------------------------------------------------------------------
    def init(self) -> None:
        bindir = pg_bindir()
        self.home.mkdir(parents=True, exist_ok=True)
        self.socketdir.mkdir(exist_ok=True)
        owner = self._owner()
        if owner is not None:
            for path in (self.home, self.socketdir):
                os.chown(path, owner.pw_uid, owner.pw_gid)
            probe = subprocess.run(["runuser", "-u", owner.pw_name, "--", "test", "-w", str(self.home)])
            if probe.returncode != 0:
                raise ClusterError(
                    f"the postgres user cannot reach {self.home}; set COGMEM_HOME to a directory it can traverse"
                )
        os.chmod(self.socketdir, 0o700)
        self._run(
            [
                str(bindir / "initdb"),
                "-D",
                str(self.datadir),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-instructions",
            ]
        )
        with (self.datadir / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# cogmem-pg embedded cluster\n"
                "listen_addresses = ''\n"
                f"unix_socket_directories = '{self.socketdir}'\n"
                "unix_socket_permissions = 0700\n"
                f"port = {self.port}\n"
                "shared_preload_libraries = 'pg_cron'\n"
                f"cron.database_name = '{DATABASE}'\n"
                # pg_cron runs jobs in background workers: the cluster listens on no TCP address.
                "cron.use_background_workers = on\n"
                "max_worker_processes = 16\n"
                "max_connections = 50\n"
                "shared_buffers = 256MB\n"
            )
            for key, value in self.settings.items():
                conf.write(f"{key} = {value}\n")

    def start(self) -> None:
        if not self.initialized():
            self.init()
        if self.running():
            return
        # The server's PYTHONPATH is ours to decide, not inherited from whoever started it.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        path = self.server_python_path() if self.server_python else None
        if path:
            env["PYTHONPATH"] = path
        self._run(
            [str(pg_bindir() / "pg_ctl"), "-D", str(self.datadir), "-l", str(self.logfile), "-w", "-t", "60", "start"],
            env=env,
        )
        self.ensure_database()

    def stop(self) -> None:
        if self.running():
            self._run([str(pg_bindir() / "pg_ctl"), "-D", str(self.datadir), "-m", "fast", "-w", "stop"])

    def ensure_database(self, dbname: str = DATABASE) -> None:
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone():
                conn.execute(f'CREATE DATABASE "{dbname}"')

    def server_can_embed(self, dbname: str = DATABASE) -> bool | None:
        """Whether cogmem.embed() works in the running server (asked there); None when it cannot be asked."""
        if not self.running():
            return None
        try:
            with psycopg.connect(self.dsn(dbname), autocommit=True) as conn:
                installed = conn.execute("SELECT to_regprocedure('cogmem.server_can_embed()') IS NOT NULL").fetchone()
                if not installed or not installed[0]:
                    return None
                conn.execute("SET client_min_messages = error")  # the reason goes to the log, not here
                answer = conn.execute("SELECT cogmem.server_can_embed()").fetchone()
                return bool(answer and answer[0])
        except psycopg.Error:
            return None

    def status(self) -> dict[str, object]:
        return {
            "home": str(self.home),
            "initialized": self.initialized(),
            "running": self.running(),
            "dsn": self.dsn(),
            "server_embedding": self.server_can_embed(),
        }


@contextmanager
def temporary_home(prefix: str = "cogmem-") -> Iterator[Path]:
    """A fresh temporary directory the server's user can traverse, removed after."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    home.chmod(0o755)
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def temporary_cluster(
    port: int, *, prefix: str = "cogmem-", settings: dict[str, str] | None = None, server_python: bool = True
) -> Iterator[Cluster]:
    """A started throw-away cluster on PORT in a temporary_home, stopped and removed however the caller ends
    (a benchmark, `make schema`)."""
    with temporary_home(prefix) as home:
        cluster = Cluster(home=home / "cluster", port=port, settings=dict(settings or {}), server_python=server_python)
        try:
            cluster.start()
            yield cluster
        finally:
            cluster.stop()
