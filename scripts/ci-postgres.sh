#!/bin/sh
# Makes a PostgreSQL server ready for the service's test suite on a fresh Debian machine, as root:
# installs Debian's postgresql package when it is missing, starts the cluster, lets the role
# ${NOTIF_PG_ROLE:-notif} in without a password over the unix socket and 127.0.0.1/::1 (trust: for CI
# machines only), gives it CREATEDB (the tests make one database per server) and pg_signal_backend
# (dropping a test database ends an autovacuum worker on it), creates its database,
# and prints the DATABASE_URL to use on stdout (everything else goes to stderr).
#
#   export TEST_DATABASE_URL="$(scripts/ci-postgres.sh)" && npm run test:server:pg
#
# Running it again changes nothing and prints the same URL.
set -eu

ROLE="${NOTIF_PG_ROLE:-notif}"
DB="${NOTIF_PG_DB:-notif}"

log() { echo "ci-postgres: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
  log "must run as root"
  exit 1
fi

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || ! command -v pg_lsclusters >/dev/null 2>&1; then
  log "installing postgresql from Debian's packages"
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
fi

VERSION="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
CLUSTER=main
if ! pg_lsclusters -h | awk -v v="$VERSION" -v c="$CLUSTER" '$1 == v && $2 == c { found = 1 } END { exit !found }'; then
  log "creating cluster $VERSION/$CLUSTER"
  pg_createcluster --encoding UTF8 --locale C.UTF-8 "$VERSION" "$CLUSTER" >&2
fi
CONF="/etc/postgresql/$VERSION/$CLUSTER"
PORT="$(pg_lsclusters -h | awk -v v="$VERSION" -v c="$CLUSTER" '$1 == v && $2 == c { print $3 }')"

# Password-less access for the role only, ahead of the package's default rules (first match wins).
HBA="$CONF/pg_hba.conf"
MARK="# notif-inbox ci"
if ! grep -q "^$MARK" "$HBA"; then
  log "allowing role $ROLE without a password on the socket and localhost"
  TMP="$(mktemp)"
  {
    echo "$MARK"
    echo "local   all   $ROLE                   trust"
    echo "host    all   $ROLE   127.0.0.1/32    trust"
    echo "host    all   $ROLE   ::1/128         trust"
    cat "$HBA"
  } >"$TMP"
  cat "$TMP" >"$HBA"
  rm -f "$TMP"
fi

if pg_lsclusters -h | awk -v v="$VERSION" -v c="$CLUSTER" '$1 == v && $2 == c && $4 == "online" { found = 1 } END { exit !found }'; then
  pg_ctlcluster "$VERSION" "$CLUSTER" reload >&2
else
  log "starting cluster $VERSION/$CLUSTER"
  pg_ctlcluster "$VERSION" "$CLUSTER" start >&2
fi

i=0
until pg_isready -q -h 127.0.0.1 -p "$PORT"; do
  i=$((i + 1))
  if [ "$i" -ge 60 ]; then
    log "PostgreSQL did not become ready in 30 s"
    exit 1
  fi
  sleep 0.5
done

psql_admin() { runuser -u postgres -- psql -p "$PORT" -v ON_ERROR_STOP=1 -tA "$@"; }

if [ "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != 1 ]; then
  log "creating role $ROLE"
  psql_admin -c "CREATE ROLE \"$ROLE\" LOGIN CREATEDB" >&2
else
  psql_admin -c "ALTER ROLE \"$ROLE\" LOGIN CREATEDB" >&2
fi
# DROP DATABASE ... WITH (FORCE) must be able to end an autovacuum worker on a test database.
psql_admin -c "GRANT pg_signal_backend TO \"$ROLE\"" >&2
if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
  log "creating database $DB"
  psql_admin -c "CREATE DATABASE \"$DB\" OWNER \"$ROLE\" ENCODING 'UTF8' TEMPLATE template0" >&2
fi

echo "postgres://$ROLE@127.0.0.1:$PORT/$DB"
