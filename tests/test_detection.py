"""Detection figures of issue 7, through the real decisions (seeded, no I/O)."""

from __future__ import annotations

from bench import detection


def test_isolated_failures_open_no_incident():
    for seed in (1, 7, 42):
        assert detection.isolated_failures(seed).incidents == 0


def test_hard_outage_opens_within_threshold_and_resolves_within_recovery():
    out = detection.hard_outage(start=100, end=160)
    assert len(out.opened) == 1
    ((opened, resolved),) = out.opened.values()
    assert opened == 102  # the third failed cycle
    assert resolved == 161  # the second good cycle


def test_network_down_opens_nothing_and_degrades_collection():
    out = detection.network_down(start=50, end=70)
    assert out.incidents == 0
    assert out.suspect_cycles == list(range(50, 70))
    assert out.collection_notes[0].startswith(
        "Our own vantage point looks at fault: 20 of 20 checks failed at once and all 2 canary checks failed."
    )


def test_flapping_for_an_hour_is_one_incident():
    out = detection.flapping(cycles=60)
    assert out.incidents == 1
