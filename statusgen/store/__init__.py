"""The embedded store: one SQLite file, and the run lock beside it.

Store(path)          database: reads and writes, each run's writes in one transaction
  migrations         the schema, as numbered migrations applied in place
  hours              a service's published result rows, kept in hourly blocks
  records            what the store is given and gives back (Cycle, Notification, ...)
  failures           SQLite's and the file system's errors as one StoreError line
lock_store(path)     the run lock beside the store (``lock``)
"""

from __future__ import annotations

from statusgen.store.database import (
    NOTIFICATION_RETENTION_S,
    RAW_RETENTION_S,
    RESOLUTIONS,
    Store,
    recorded_incident_ids,
)
from statusgen.store.failures import store_failure
from statusgen.store.lock import lock_store
from statusgen.store.records import BucketRow, Cycle, Notification, SendOutcome

__all__ = [
    "NOTIFICATION_RETENTION_S",
    "RAW_RETENTION_S",
    "RESOLUTIONS",
    "BucketRow",
    "Cycle",
    "Notification",
    "SendOutcome",
    "Store",
    "lock_store",
    "recorded_incident_ids",
    "store_failure",
]
