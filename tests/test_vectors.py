"""sql/005-vectors.sql: the embedding dimension and the checks an embedding passes."""

import psycopg
import pytest

from tests.conftest import one


def test_embedding_dimensions_come_from_the_column(db):
    assert one(db, "SELECT cogmem.embedding_dimensions()") == 384


def test_wrong_embedding_dimension_is_refused_with_hint(db):
    with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
        db.execute("SELECT cogmem._check_embedding('[1,2,3]'::vector)")
    assert err.value.diag.message_primary == "embedding has 3 dimensions, expected 384"
    assert err.value.diag.message_hint.startswith("Embed with the model this schema was installed for")
