"""sql/035-contradiction.sql: does a new statement contradict an established memory?

The rule-based parts on their own, then the whole decision measured on the test split of the labelled
pairs (bench/corpus/dissonance.jsonl), each pair through remember() as an application calls it.
"""

import pytest

from bench import inbound
from bench.corpus import pairs
from tests.conftest import one

# What the shipped model reaches on the test split, less a margin (bench/RESULTS.md has the figures).
FLOORS = {"precision": 0.82, "recall": 0.48, "accuracy": 0.75}


@pytest.mark.parametrize(
    ("text", "polarity"),
    [
        ("Don't restart web-1 at night.", -1),
        ("Never deploy on Fridays", -1),
        ("Avoid inline styles", -1),
        ("Reload nginx without testing the config", -1),
        ("Restart web-1 tonight.", 1),
        ("Always use Tailwind for styling.", 1),
        ("Sunucuyu gece yeniden başlatma.", -1),
        ("Cuma günleri asla deploy yapılmaz", -1),
        ("Sunucuyu bu gece yeniden başlat.", 1),
        # In capitals, under every collation (Turkish words are read with İ, I, ı and i one letter).
        ("BU DOSYAYI SAKIN SİLME", -1),
        ("SAKIN SİLME", -1),
        ("SUNUCUYU GECE YENİDEN BAŞLATMA.", -1),
        ("SUNUCUYU BU GECE YENİDEN BAŞLAT.", 1),
    ],
)
@pytest.mark.parametrize("collation", ["default", "C"])
def test_polarity(db, text, polarity, collation):
    assert one(db, f'SELECT cogmem.polarity(%s::text COLLATE "{collation}")', (text,)) == polarity


@pytest.mark.parametrize(
    ("established", "instruction", "contradicts"),
    [
        ("Don't restart web-1 at night.", "Restart web-1 tonight.", True),
        ("Always use Tailwind for styling.", "Use inline styles for the new page.", True),  # an alternative
        ("Always use Tailwind for styling.", "Use Tailwind's dark mode classes.", False),  # the same choice
        ("Her zaman Tailwind kullanın.", "Yeni sayfada inline stil kullan.", True),
        ("Don't restart web-1 at night.", "Don't restart web-2 at night either.", False),  # same polarity
        ("Don't restart web-1 at night.", "Restart web-2 tonight.", False),  # another host: a sibling
        ("Sunucuyu gece yeniden başlatma.", "Sunucuyu bu gece yeniden başlat.", True),
    ],
)
def test_contradicts(db, established, instruction, contradicts):
    assert one(db, "SELECT cogmem.contradicts(%s, %s)", (established, instruction)) is contradicts


def test_contradictions_on_the_test_split(db):
    result = inbound.dissonance(db, pairs("dissonance", "test"))
    assert result.precision() >= FLOORS["precision"]
    assert result.recall() >= FLOORS["recall"]
    assert result.accuracy >= FLOORS["accuracy"]
    # Chit-chat is never held: only an instruction can be.
    assert result.held_share("casual") == 0


def test_pair_cues_have_names(db):
    assert one(db, "SELECT cardinality(cogmem._pair_cue_names())") == one(
        db,
        "SELECT cardinality(cogmem._pair_cues('a b', 'dos_and_donts', 'a c', cogmem._inbound_cues('a c'), 0.5,"
        " 'english', true))",
    )
