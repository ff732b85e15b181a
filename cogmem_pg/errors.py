"""Typed errors of the Python client, mapped from the server's SQLSTATE (issue 51).

Every database error the client raises is still the psycopg exception the server's SQLSTATE names (so
``except psycopg.errors.InvalidParameterValue`` keeps working) and is also one of these, so that an
application can write ``except cogmem_pg.errors.NotFound`` without knowing SQLSTATEs::

    try:
        client.recall("acme", "…")
    except UnknownTenant as error:
        print(error, error.hint)   # unknown tenant "acme" / Create it first: SELECT cogmem.create_tenant('acme');

The server's message, HINT and DETAIL come with it (``hint``, ``detail``, ``sqlstate``).
"""

from __future__ import annotations

import psycopg


class CogmemError(psycopg.Error):
    """Any error cogmem's server or client raised; its message, HINT and SQLSTATE as the server gave them."""

    @property
    def hint(self) -> str | None:
        return self.diag.message_hint

    @property
    def detail(self) -> str | None:
        return self.diag.message_detail


class NotFound(CogmemError):
    """No such memory, rule, recall, conflict, preset or role, or one the caller may not reach (P0002, 42704)."""


class UnknownTenant(NotFound):
    """The tenant does not exist, or the caller was not granted it (42704 'unknown tenant')."""


class InvalidInput(CogmemError):
    """An argument the server refused: out of range, empty, too long, malformed (SQLSTATE class 22; 23502,
    23514, 42703)."""


class PermissionDenied(CogmemError):
    """The role may not do this, or the login was refused (42501, 28000, 28P01)."""


class Conflict(CogmemError):
    """Held by something else: a lock, a running re-embedding or experiment, a duplicate, a concurrent
    write; retry or resolve it first, as the HINT says (40001, 55P03, 55006, 23505)."""


class LimitExceeded(CogmemError):
    """A limit of the tenant or the server: too many topics, too long a batch (54000)."""


class NotReady(CogmemError):
    """The object is not in the state the call needs, e.g. nothing to resume (55000), or the server lacks
    the feature (0A000)."""


_BY_SQLSTATE: dict[str, type[CogmemError]] = {
    "P0002": NotFound,
    "42704": NotFound,
    "23502": InvalidInput,
    "23514": InvalidInput,
    "42703": InvalidInput,
    "42501": PermissionDenied,
    "28000": PermissionDenied,
    "28P01": PermissionDenied,
    "40001": Conflict,
    "55P03": Conflict,
    "55006": Conflict,
    "23505": Conflict,
    "54000": LimitExceeded,
    "55000": NotReady,
    "0A000": NotReady,
}
_TYPED: dict[tuple[type[psycopg.Error], type[CogmemError]], type] = {}


def kind_of(error: psycopg.Error) -> type[CogmemError]:
    """The typed error a psycopg error stands for."""
    state = error.sqlstate or ""
    if state == "42704" and str(error).startswith("unknown tenant"):
        return UnknownTenant
    if not state and isinstance(error, psycopg.OperationalError):
        # A refused login carries no SQLSTATE through libpq, only the server's FATAL message.
        message = str(error)
        if "authentication failed" in message or ("role" in message and "does not exist" in message):
            return PermissionDenied
        if "database" in message and "does not exist" in message:
            return NotFound
    if state.startswith("22"):
        return InvalidInput
    return _BY_SQLSTATE.get(state, CogmemError)


def retype(error: psycopg.Error) -> psycopg.Error:
    """Makes ERROR (in place, so its traceback and diagnostics stay) an instance of its typed error as well
    as of its psycopg class; returns it."""
    if isinstance(error, CogmemError):
        return error
    kind = kind_of(error)
    key = (type(error), kind)
    if key not in _TYPED:
        _TYPED[key] = type(type(error).__name__, (kind, type(error)), {"__module__": "cogmem_pg.errors"})
    error.__class__ = _TYPED[key]
    return error
