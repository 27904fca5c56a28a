#!/usr/bin/env bash
# Installs the Debian packages the test suite starts for real (headless Chromium for the UI test,
# redis-server and postgresql for the distributed test, a Japanese font for the OCR test's page)
# when they are missing. Needs root or passwordless sudo.
set -euo pipefail
packages=(chromium redis-server postgresql fonts-ipafont-gothic)
missing=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
  || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
