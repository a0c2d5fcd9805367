"""While a piece of work runs, the garbage collector skips the objects that existed before it.

A full collection walks every object the process holds: tens of ms on a
small machine for the gathered data of a large site. ``gc.freeze`` leaves it
only the objects made since, and a forked process then does not write to the
pages of the frozen objects to collect them (each such write copies a page).
Uses are counted, since they may overlap (a probe cycle's checks and canaries
run side by side): the objects are unfrozen when the last use ends.
"""

from __future__ import annotations

import gc


class OldObjectsFrozen:
    """``with OldObjectsFrozen():`` the objects that exist now are left out of collections."""

    running = 0

    def __enter__(self) -> None:
        if OldObjectsFrozen.running == 0:
            gc.freeze()
        OldObjectsFrozen.running += 1

    @staticmethod
    def also_since() -> None:
        """While a use runs: leave out of collections the objects made since it began too (what the
        work keeps to its end, made once at its start). They are let go with the rest at the end."""
        if OldObjectsFrozen.running:
            gc.freeze()

    def __exit__(self, *exc: object) -> None:
        OldObjectsFrozen.running -= 1
        if OldObjectsFrozen.running == 0:
            gc.unfreeze()
