#!/usr/bin/env bash
# Runs once, on the first start of an empty data directory (postgres image convention).
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -c "CREATE DATABASE cogmem" || true
cogmem --dsn "host=/var/run/postgresql user=$POSTGRES_USER dbname=cogmem" migrate
cogmem --dsn "host=/var/run/postgresql user=$POSTGRES_USER dbname=cogmem" bios load operations
cogmem --dsn "host=/var/run/postgresql user=$POSTGRES_USER dbname=cogmem" bios load pci-dss-4.0
