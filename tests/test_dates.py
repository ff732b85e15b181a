"""sql/062-dates.sql: the dates a text says, in English and Turkish, as recall reads them."""

from __future__ import annotations

from datetime import date

import pytest

from tests.conftest import one

MONDAY = date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday and it was so powerful.", [("yesterday", "2023-05-07", "2023-05-07")]),
        ("The day before yesterday we hiked; today I rest.",
         [("the day before yesterday", "2023-05-06", "2023-05-06"), ("today", "2023-05-08", "2023-05-08")]),
        ("Last weekend was wild!", [("last weekend", "2023-05-06", "2023-05-07")]),
        ("last week my sister moved", [("last week", "2023-05-01", "2023-05-07")]),
        ("Two weeks ago I quit.", [("two weeks ago", "2023-04-24", "2023-04-24")]),
        ("3 days ago", [("3 days ago", "2023-05-05", "2023-05-05")]),
        ("last Friday we met", [("last friday", "2023-05-05", "2023-05-05")]),
        ("next Wednesday then", [("next wednesday", "2023-05-10", "2023-05-10")]),
        ("last month was busy", [("last month", "2023-04-01", "2023-04-30")]),
        ("Dün akşam çok güzel bir konser vardı.", [("dün", "2023-05-07", "2023-05-07")]),
        ("Geçen hafta sonu Bodrum'daydık", [("geçen hafta sonu", "2023-05-06", "2023-05-07")]),
        ("geçen hafta taşındı", [("geçen hafta", "2023-05-01", "2023-05-07")]),
        ("İki hafta önce istifa ettim.", [("iki hafta önce", "2023-04-24", "2023-04-24")]),
        ("Geçen cuma buluştuk", [("geçen cuma", "2023-05-05", "2023-05-05")]),
        ("Geçen cumartesi buluştuk", [("geçen cumartesi", "2023-05-06", "2023-05-06")]),
        ("Dünya çok büyük, yesterdays are gone.", []),  # words that only begin like one
        ("We never talk about it.", []),
    ],
)  # fmt: skip
def test_relative_dates_resolve_against_the_day_said(db, text, expected):
    rows = db.execute(
        "SELECT expression, first_day::text, last_day::text FROM cogmem._relative_dates(%s, %s)", (text, MONDAY)
    ).fetchall()
    assert rows == expected


def test_when_said_shows_the_day_and_what_its_relative_dates_meant(db):
    text = "Went there yesterday, and last week too."
    shown = one(db, "SELECT cogmem._when_said(%s, '2023-05-08 13:56+00')", (text,))
    assert shown == "2023-05-08; yesterday = 2023-05-07; last week = 2023-05-01..2023-05-07"
    assert one(db, "SELECT cogmem._when_said('Nothing relative.', '2023-05-08 13:56+00')") == "2023-05-08"


@pytest.mark.parametrize(
    ("question", "span"),
    [
        ("What did Caroline do in May 2023?", "[2023-05-01,2023-06-01)"),
        ("What happened on 2023-05-07?", "[2023-05-07,2023-05-08)"),
        ("What did we talk about last week?", "[2026-11-23,2026-11-30)"),
        ("What did Melanie paint in 2022?", "[2022-01-01,2023-01-01)"),
        ("Mart ayında ne yaptık?", "[2026-03-01,2026-04-01)"),
        ("Geçen ay nereye gittik?", "[2026-11-01,2026-12-01)"),
        ("What did she buy in December?", "[2026-12-01,2027-01-01)"),  # this month: the latest December
        ("Where was he in January?", "[2026-01-01,2026-02-01)"),
        ("When may I call her?", None),  # "may" is a verb here
        ("When did Caroline go to the support group?", None),
    ],
)
def test_the_span_a_question_asks_about(db, question, span):
    assert one(db, "SELECT cogmem._asked_span(%s, '2026-12-03 10:00+00')::text", (question,)) == span
