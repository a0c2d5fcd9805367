"""The builder's side of the probe agents (docs/locations.md): what it takes from them, and what
it says of them. The batch format is ``statusgen.batches``, the inbox ``statusgen.inbox``, the
agent ``statusgen.agent``.

ingest   the batches that arrived, verified, for the store (each ``statusgen run``)
report   ``statusgen locations``: each location's last batch, taken or refused
"""
