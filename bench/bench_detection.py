"""Detection figures (issues 7 and 29): seeded scenarios through the real decisions."""

from __future__ import annotations

from bench import detection


def main() -> None:
    iso = detection.isolated_failures()
    print(f"isolated failures: 20 services x 1000 cycles at 2% failures -> {iso.incidents} incidents (goal 0)")
    hard = detection.hard_outage()
    ((opened, resolved),) = hard.opened.values()
    print(
        f"hard outage from cycle 100 to 160: opened at cycle {opened} ({opened - 100 + 1} failed cycles; "
        f"goal <= 3), resolved at cycle {resolved} ({resolved - 160 + 1} good cycles; goal <= 2)"
    )
    net = detection.network_down()
    print(
        f"all checks and canaries failing for 20 cycles: {net.incidents} incidents (goal 0), "
        f"{len(net.suspect_cycles)} cycles with collection degraded"
    )
    print(f"  health says: {net.collection_notes[0]}")
    flap = detection.flapping()
    print(f"flapping every cycle for an hour (60 cycles): {flap.incidents} incident(s) (goal 1)")
    hard = detection.hard_outage(confirm=2)
    ((opened, resolved),) = hard.opened.values()
    print(
        f"with 2 tries again within a run (site.confirm, the default): the hard outage opened at cycle {opened} "
        f"(goal 100: the run of its first failure), resolved at cycle {resolved} (goal 160)"
    )
    print("false incidents per scenario (budget 0), without and with tries within a run:")
    for name, scenario in detection.SCENARIOS.items():
        for confirm in (0, 2):
            tally = scenario(confirm=confirm)
            verdict = "PASS" if tally.false_incidents == 0 else "FAIL"
            told = f"{tally.false_incidents} false of {tally.incidents} incident(s)"
            print(f"  {name}, confirm {confirm}: {told}  {verdict}")
