"""The configuration: one TOML file, every key declared once, and what the operator writes beside it.

    load_config(path) -> Config       load: the file bounded, every problem at once (ConfigError)
      keys       every key's name, converter, default and doc (SITE_KEYS, CHECK_KEYS, ...)
      values     the converters and the bounds they enforce
      records    Config, SiteConfig, ServiceConfig, CheckConfig, VendorConfig, NotifyConfig, ...
      reference  docs/configuration.md, generated from the keys (``statusgen config-docs``)

What the operator writes, read here too: ``conditions`` (a check's conditions on the answer),
``cron`` (recurring maintenance), ``secrets`` (``${VARIABLES}`` and what is never published),
``notifyurl`` (notifier URLs) and ``operatorfiles`` (the notes folder).
"""

from __future__ import annotations

from statusgen.config.load import load_config, parse_config, shown_folder
from statusgen.config.records import (
    CheckConfig,
    Config,
    LocationConfig,
    MailServer,
    MaintenanceWindow,
    NotifyConfig,
    ServiceConfig,
    SiteConfig,
    SubscriptionsConfig,
    VendorConfig,
)
from statusgen.config.reference import config_reference, documented_keys
from statusgen.config.values import NOTIFY_EVENTS

__all__ = [
    "NOTIFY_EVENTS",
    "CheckConfig",
    "Config",
    "LocationConfig",
    "MailServer",
    "MaintenanceWindow",
    "NotifyConfig",
    "ServiceConfig",
    "SiteConfig",
    "SubscriptionsConfig",
    "VendorConfig",
    "config_reference",
    "documented_keys",
    "load_config",
    "parse_config",
    "shown_folder",
]
