"""A probe agent in another location: ``statusgen probe --location NAME`` (docs/locations.md).

run   one run: the location's checks, delivered as one signed batch (``statusgen.batches``) to
      the inbox (``statusgen.inbox``); a batch that could not be sent is kept for the next run
loop  runs on the site's interval (``--loop``), stopped cleanly by a signal

The agent's side sits on the top floor, above the probes and the loop it uses; the builder's
side is ``statusgen.locations``.
"""
