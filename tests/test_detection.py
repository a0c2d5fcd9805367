"""Detection figures of issue 7, through the real decisions (seeded, no I/O)."""

from __future__ import annotations

from datetime import timedelta

from bench import detection
from statusgen.model import EXCLUDED_FLAG, MAINTENANCE_FLAG, Status


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


def test_network_down_while_a_vendor_reports_trouble_opens_no_incident_of_ours():
    out = detection.network_down_while_vendor_reports_trouble(start=50, end=53)
    assert out.incidents == 0 and out.false_incidents == 0
    assert out.suspect_cycles == [50, 51, 52]
    during = out.states[51]["s0"]
    assert during.status is Status.PARTIAL_OUTAGE  # the vendor's word, published as theirs
    assert during.incident_basis is Status.OPERATIONAL  # our own view, held: nothing counted against it
    assert during.reason.count("Vendor reports") == 1
    assert "Not counted: the latest result of check 1, set aside" in during.reason
    ((evidence),) = during.evidence
    assert evidence.flag == EXCLUDED_FLAG and evidence.outcome == "timeout"
    assert evidence.at == detection.T0 + timedelta(minutes=51)  # the latest result, not the last counted one


def test_after_a_vendor_maintenance_the_count_starts_afresh():
    out = detection.vendor_maintenance(start=20, end=30)
    assert out.incidents == 0 and out.false_incidents == 0
    during = out.states[25]["s0"]
    assert during.status is Status.MAINTENANCE and during.evidence[0].flag == MAINTENANCE_FLAG
    assert during.reason == (
        "Vendor reports maintenance in progress: Database upgrade. Our checks fail, as expected during maintenance."
    )
    after = out.states[30]["s0"]
    assert after.status is Status.OPERATIONAL and after.reason == "The check answers as expected."
    assert after.evidence[0].flag is None


def test_an_outage_right_after_a_vendor_maintenance_counts_only_failures_after_it():
    during = range(20, 30)
    cfg = detection.config(3, vendor=True)
    out = detection.simulate(
        cfg,
        40,
        lambda i, c: not (i == 0 and c >= 20),  # fails in the window and keeps failing after it
        vendor=lambda c: "maintenance" if c in during else "operational",
    )
    ((inc),) = out.incidents_seen.values()
    assert out.opened[inc.id][0] == 32  # the third failed cycle after the window
    assert inc.started_at == detection.T0 + timedelta(minutes=30)  # its first failure after the window
    assert inc.updates[0].message.startswith("Opened after 3 failed cycles in a row")


def test_tries_within_a_run_open_and_resolve_within_the_run_and_open_nothing_false():
    """site.confirm = 2 (the default): a check that starts failing is tried twice more within the
    run, so the outage opens in the run of its first failure and resolves in the run of its first
    answer; blips tried again, our own network down and a vendor's maintenance open nothing."""
    out = detection.hard_outage(start=100, end=160, confirm=2)
    assert list(out.opened.values()) == [[100, 160]]
    assert detection.isolated_failures(seed=7, confirm=2).incidents == 0
    assert detection.network_down(start=50, end=70, confirm=2).incidents == 0
    assert detection.network_down_while_vendor_reports_trouble(confirm=2).incidents == 0
    assert detection.vendor_maintenance(confirm=2).incidents == 0
    flap = detection.flapping(cycles=60, confirm=2)
    # a whole minute down is a confirmed outage; once the bounces make it flapping, one incident holds
    assert flap.false_incidents == 0 and flap.incidents == 3
