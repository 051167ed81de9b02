#!/usr/bin/env bash
# An online backup of the embedded log, and a restore from it. (Quoted in docs/operations.md; a test runs it
# beside a server taking writes, with `reports` on the PATH and REPORTS_DATA_DIR set; stop_service
# and start_service stand for however the service is run: systemctl, docker compose stop/start, ...)
set -euo pipefail
backups=${BACKUPS:-/var/backups/reports}
name="reports-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$backups"

# 1. While the service runs and takes writes: copy the log up to its last whole, durable batch and
#    the newest usable snapshot into a new directory, check the copy (frames, CRCs, every event, the
#    fold), and print its position and state digest.
reports backup "$backups/$name" | tee "$backups/$name.txt"

# 2. To restore it, stop the service first (restore refuses while it runs), then put it in place.
stop_service
reports restore "$backups/$name"

# 3. Started again, the service folds the restored log: its state has the digest the backup printed.
start_service
reports replay | grep 'state digest' | diff - <(grep 'state digest' "$backups/$name.txt")
