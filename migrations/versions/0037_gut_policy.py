"""The Gut's policy mechanism (issue 36): selection by weights, success with an interval.

gut_settings.mechanism chooses how a release selects patterns: 'policy' (the policy Laplace mechanism
of differentially private set union, the default) or 'count' (distinct-tenant counts, as releases did
before). reports_per_tenant bounds how many published patterns a tenant gives its success for;
key_similarity is where the Gut's multilingual keys cluster. The
threshold of a policy release is a weight, not a number of tenants: gut_releases.threshold becomes a
double precision, and each release records its mechanism (NULL: released before this revision). A
pattern's success carries its 90% interval.

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-04
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _raw import execute

revision = "0037"
down_revision = "0036"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute("""
DROP FUNCTION IF EXISTS cogmem.gut_release(double precision, jsonb);  -- its threshold becomes a weight
DROP FUNCTION IF EXISTS cogmem.gut_patterns_for(text);  -- it gives the success's interval
ALTER TABLE cogmem.gut_settings
    ADD COLUMN mechanism text NOT NULL DEFAULT 'policy' CHECK (mechanism IN ('policy', 'count')),
    ADD COLUMN reports_per_tenant integer NOT NULL DEFAULT 1 CHECK (reports_per_tenant BETWEEN 1 AND 100),
    ADD COLUMN key_similarity real NOT NULL DEFAULT 0.45 CHECK (key_similarity > 0 AND key_similarity < 1);
COMMENT ON COLUMN cogmem.gut_settings.mechanism IS
'How a release selects patterns: policy (each tenant spreads a weight of one; docs/gut.md) or count.';
COMMENT ON COLUMN cogmem.gut_settings.key_similarity IS
'The cosine at which lessons'' multilingual keys (centred per language) cluster into one pattern.';
COMMENT ON COLUMN cogmem.gut_settings.reports_per_tenant IS
'How many published patterns a tenant gives its success for, at most, in one release.';
ALTER TABLE cogmem.gut_releases
    ALTER COLUMN threshold TYPE double precision,
    ADD COLUMN mechanism text CHECK (mechanism IN ('policy', 'count')),
    ADD COLUMN key_model text;
COMMENT ON COLUMN cogmem.gut_releases.key_model IS
'What clustered the lessons: the Gut''s multilingual model, or the memories'' own vectors where the server''s '
'Python lacks it (NULL: released before this revision).';
COMMENT ON COLUMN cogmem.gut_releases.threshold IS
'What a noisy figure had to pass: a weight (policy) or a number of tenants (count).';
ALTER TABLE cogmem.gut_patterns ADD COLUMN success_low real, ADD COLUMN success_high real;
COMMENT ON COLUMN cogmem.gut_patterns.success_low IS 'The lower end of the noisy success''s 90% interval.';
COMMENT ON COLUMN cogmem.gut_patterns.success_high IS 'The upper end of the noisy success''s 90% interval.';
""")


def downgrade() -> None:
    execute("""
DROP FUNCTION IF EXISTS cogmem.gut_release(double precision, jsonb);
DROP FUNCTION IF EXISTS cogmem.gut_patterns_for(text);
ALTER TABLE cogmem.gut_patterns DROP COLUMN success_low, DROP COLUMN success_high;
ALTER TABLE cogmem.gut_releases DROP COLUMN mechanism, DROP COLUMN key_model,
    ALTER COLUMN threshold TYPE integer USING ceil(threshold);
ALTER TABLE cogmem.gut_settings DROP COLUMN mechanism, DROP COLUMN reports_per_tenant,
    DROP COLUMN key_similarity;
""")
