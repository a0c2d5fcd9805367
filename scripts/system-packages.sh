#!/usr/bin/env bash
# Installs the Debian packages the tests and benchmarks use, when they are missing:
#   nginx (the production server the conformance suite runs against),
#   chromium + chromium-driver (the website tests in a real headless browser),
#   libxml2-utils (xmllint: Atom feeds against the RELAX NG schema of RFC 4287),
#   rclone (statusgen publish, tested against a local target and S3), wrk and rsync (benchmarks),
#   systemd (systemd-analyze verify checks the units in contrib/),
#   fonts-ipafont-gothic (a Japanese font: the pages in Japanese are read and shot in Chromium),
#   prometheus (its promtool checks /metrics as Prometheus' own linter),
#   podman, runc and mmdebstrap (the container image is built and run from a base made of Debian's packages),
#   dovecot-imapd (the real IMAP mailbox the subscriptions' tests read: tests/mailservers.py).
# Needs root (as on CI and the development machines); does nothing when all are there.
set -euo pipefail
want=(nginx:nginx chromium:chromium chromedriver:chromium-driver xmllint:libxml2-utils rclone:rclone wrk:wrk
      rsync:rsync systemd-analyze:systemd promtool:prometheus podman:podman runc:runc mmdebstrap:mmdebstrap
      dovecot:dovecot-imapd)
missing=()
for pair in "${want[@]}"; do
  cmd=${pair%%:*}; pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$pkg")
done
fc-list :lang=ja 2>/dev/null | grep -q . || missing+=(fonts-ipafont-gothic)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
