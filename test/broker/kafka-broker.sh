#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft, broker+controller in one JVM) on 127.0.0.1,
# run from Maven Central jars. No Docker needed: Java 17+ and Maven.
#
#   test/broker/kafka-broker.sh fetch    # download the broker classpath into .cache/kafka/libs
#   test/broker/kafka-broker.sh up       # fetch if needed, format once, start, wait until ready
#   test/broker/kafka-broker.sh down     # SIGTERM, up to KAFKA_STOP_TIMEOUT s, then SIGKILL
#   test/broker/kafka-broker.sh status   # exit 0 when running, 3 when not
#   test/broker/kafka-broker.sh logs     # tail server.log
#   test/broker/kafka-broker.sh has-libs # exit 0 when the jars are already cached (no mvn needed)
#
# Environment (defaults in brackets):
#   KAFKA_BROKER_NAME [default]    state lives in .cache/kafka/run/<name>/ (data, logs, pid, properties)
#   KAFKA_PORT [9092]              PLAINTEXT listener
#   KAFKA_ADVERTISED_PORT [KAFKA_PORT]  the PLAINTEXT port clients and other nodes are told (a proxy's)
#   KAFKA_CONTROLLER_PORT [9093]   KRaft controller listener
#   KAFKA_SASL_PORT [9094]         SASL_PLAINTEXT listener, mechanism PLAIN
#   KAFKA_SASL_TEST_USER [reports] / KAFKA_SASL_TEST_PASSWORD [reports-secret]
#   KAFKA_HEAP [-Xms256m -Xmx512m]
#   KAFKA_JVM_OPTS                 replaces the default quick-start JVM flags
#   KAFKA_CDS [1]                  0: no AppCDS class archive (see cds_flags below)
#   KAFKA_BROKER_FRESH [0]         1: wipe the data dir before `up` (stops a running broker first)
#   KAFKA_AUTO_CREATE_TOPICS [false]
#   KAFKA_EXTRA_PROPERTIES         lines appended to server.properties (later keys win)
#   A node of a cluster (combined broker + controller, static quorum; see test/helpers/kafka-cluster.ts):
#   KAFKA_NODE_ID [1]              node.id
#   KAFKA_QUORUM_VOTERS            controller.quorum.voters [<node id>@127.0.0.1:<controller port>]
#   KAFKA_CLUSTER_ID               the id storage is formatted with, the same on every node [random]
#   KAFKA_WATCH_PID                SIGKILL the broker once this process is gone (a test run that died)
#   KAFKA_RUN_AS_UID               run the JVM as this user id (its run dir given to it): nftables can
#                                  then tell one node's packets from another's (`meta skuid`)
#   KAFKA_READY_TIMEOUT_MS [90000] KAFKA_STOP_TIMEOUT [30] (seconds)
#   JAVA_HOME / JAVA [java], MVN [mvn]
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
POM="$SCRIPT_DIR/pom.xml"
LOG4J_CONFIG="$SCRIPT_DIR/log4j2.properties"

# Versions come from the POM, the single place to change them.
pom_property() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$POM" | head -n 1; }
KAFKA_VERSION="$(pom_property kafka.version)"
LOG4J_VERSION="$(pom_property log4j.version)"

CACHE_DIR="$ROOT/.cache/kafka"
LIBS_DIR="$CACHE_DIR/libs"
M2_DIR="$CACHE_DIR/m2"
LIBS_MARKER="$LIBS_DIR/.complete"
LIBS_STAMP="kafka_2.13-$KAFKA_VERSION log4j-$LOG4J_VERSION"

NAME="${KAFKA_BROKER_NAME:-default}"
PORT="${KAFKA_PORT:-9092}"
ADVERTISED_PORT="${KAFKA_ADVERTISED_PORT:-$PORT}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
SASL_PORT="${KAFKA_SASL_PORT:-9094}"
SASL_USER="${KAFKA_SASL_TEST_USER:-reports}"
SASL_PASSWORD="${KAFKA_SASL_TEST_PASSWORD:-reports-secret}"
HEAP="${KAFKA_HEAP:--Xms256m -Xmx512m}"
# Quick start on a small (2-core) machine: C1 only (-0.6..0.9 s to ready, measured), serial GC
# (least footprint; GC choice made no measurable difference), plus the AppCDS archive below.
# For throughput runs (benchmarks) pass KAFKA_JVM_OPTS without -XX:TieredStopAtLevel=1.
JVM_OPTS="${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError -Xshare:auto -Djava.awt.headless=true}"
read -r -a HEAP_ARGS <<<"$HEAP"
read -r -a JVM_ARGS <<<"$JVM_OPTS"
CDS="${KAFKA_CDS:-1}"
FRESH="${KAFKA_BROKER_FRESH:-0}"
AUTO_CREATE_TOPICS="${KAFKA_AUTO_CREATE_TOPICS:-false}"
READY_TIMEOUT_MS="${KAFKA_READY_TIMEOUT_MS:-90000}"
STOP_TIMEOUT_S="${KAFKA_STOP_TIMEOUT:-30}"
NODE_ID="${KAFKA_NODE_ID:-1}"
QUORUM_VOTERS="${KAFKA_QUORUM_VOTERS:-$NODE_ID@127.0.0.1:$CONTROLLER_PORT}"
CLUSTER_ID="${KAFKA_CLUSTER_ID:-}"
WATCH_PID="${KAFKA_WATCH_PID:-}"
RUN_AS_UID="${KAFKA_RUN_AS_UID:-}"

if [[ -n "${JAVA:-}" ]]; then :
elif [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then JAVA="$JAVA_HOME/bin/java"
else JAVA=java; fi
MVN="${MVN:-mvn}"

RUN_DIR="$CACHE_DIR/run/$NAME"
DATA_DIR="$RUN_DIR/data"
LOGS_DIR="$RUN_DIR/logs"
PID_FILE="$RUN_DIR/kafka.pid"
PROPS_FILE="$RUN_DIR/server.properties"
CONSOLE_LOG="$LOGS_DIR/console.log"

WAIT_READY_JS="$ROOT/dist/test/broker/wait-ready.js"
WAIT_READY_TS="$ROOT/test/broker/wait-ready.ts"

log() { printf 'kafka-broker[%s]: %s\n' "$NAME" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ms() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then local t="${EPOCHREALTIME/[.,]/}"; printf '%s\n' "${t:0:${#t}-3}"
  else printf '%s000\n' "$(date +%s)"; fi
}

validate() {
  [[ "$NAME" =~ ^[A-Za-z0-9._-]+$ ]] || die "KAFKA_BROKER_NAME must match [A-Za-z0-9._-]+ (got '$NAME')"
  [[ -z "$RUN_AS_UID" || "$RUN_AS_UID" =~ ^[1-9][0-9]*$ ]] || die "KAFKA_RUN_AS_UID must be a user id above 0 (got '$RUN_AS_UID')"
  local p
  for p in "$PORT" "$CONTROLLER_PORT" "$SASL_PORT" "$ADVERTISED_PORT"; do
    if ! [[ "$p" =~ ^[0-9]+$ ]] || ((p < 1 || p > 65535)); then die "invalid port '$p'"; fi
  done
  [[ "$PORT" != "$CONTROLLER_PORT" && "$PORT" != "$SASL_PORT" && "$CONTROLLER_PORT" != "$SASL_PORT" ]] \
    || die "KAFKA_PORT, KAFKA_CONTROLLER_PORT and KAFKA_SASL_PORT must differ"
  [[ "$SASL_USER" =~ ^[A-Za-z0-9._-]+$ ]] || die "KAFKA_SASL_TEST_USER must match [A-Za-z0-9._-]+"
  [[ "$SASL_PASSWORD" != *[\"\\$'\n']* ]] || die "KAFKA_SASL_TEST_PASSWORD must not contain quotes, backslashes or newlines"
  [[ "$READY_TIMEOUT_MS" =~ ^[0-9]+$ && "$STOP_TIMEOUT_S" =~ ^[0-9]+$ ]] || die "timeouts must be integers"
  [[ "$NODE_ID" =~ ^[0-9]+$ ]] || die "KAFKA_NODE_ID must be a non-negative integer (got '$NODE_ID')"
  [[ "$QUORUM_VOTERS" =~ ^[0-9]+@[^,@:]+:[0-9]+(,[0-9]+@[^,@:]+:[0-9]+)*$ ]] || die "KAFKA_QUORUM_VOTERS must be id@host:port[,...] (got '$QUORUM_VOTERS')"
  [[ ",$QUORUM_VOTERS" == *",$NODE_ID@"* ]] || die "KAFKA_QUORUM_VOTERS must name this node ($NODE_ID)"
  [[ -z "$CLUSTER_ID" || "$CLUSTER_ID" =~ ^[A-Za-z0-9_][A-Za-z0-9_-]{21}$ ]] || die "KAFKA_CLUSTER_ID must be 22 base64url characters (got '$CLUSTER_ID')"
  [[ -z "$WATCH_PID" || "$WATCH_PID" =~ ^[0-9]+$ ]] || die "KAFKA_WATCH_PID must be a pid (got '$WATCH_PID')"
}

# ---------------------------------------------------------------------------------------------
# fetch

libs_present() { [[ -f "$LIBS_MARKER" && "$(cat "$LIBS_MARKER")" == "$LIBS_STAMP" ]]; }

fetch_locked() {
  libs_present && return 0
  command -v "$MVN" >/dev/null 2>&1 || die "Maven ('$MVN') not found: install Maven (and Java 17+) to run a local Kafka broker"
  local tmp="$CACHE_DIR/libs.tmp.$$"
  rm -rf "$tmp"
  log "fetching Kafka $KAFKA_VERSION (kafka_2.13) and log4j $LOG4J_VERSION from Maven Central into $LIBS_DIR"
  # Maven 3.8 prints stray ANSI resets even with -q -B: keep its output for the failure case only.
  local mvn_log="$CACHE_DIR/fetch.$$.log"
  if ! "$MVN" -q -B -Dstyle.color=never -f "$POM" \
      "-Dmaven.repo.local=$M2_DIR" "-Dkafka.libs.dir=$tmp" \
      org.apache.maven.plugins:maven-dependency-plugin:copy-dependencies -DincludeScope=runtime \
      >"$mvn_log" 2>&1; then
    cat "$mvn_log" >&2
    rm -rf "$tmp" "$mvn_log"
    die "mvn dependency:copy-dependencies failed (needs Maven Central; cache in $M2_DIR)"
  fi
  rm -f "$mvn_log"
  compgen -G "$tmp/kafka_2.13-$KAFKA_VERSION.jar" >/dev/null || { rm -rf "$tmp"; die "kafka_2.13-$KAFKA_VERSION.jar missing after fetch"; }
  printf '%s\n' "$LIBS_STAMP" >"$tmp/.complete"
  rm -rf "$LIBS_DIR"
  mv "$tmp" "$LIBS_DIR"
  log "fetched $(find "$LIBS_DIR" -name '*.jar' | wc -l | tr -d ' ') jars"
}

fetch() {
  libs_present && return 0
  mkdir -p "$CACHE_DIR"
  if command -v flock >/dev/null 2>&1; then
    # Several brokers may be brought up at once (parallel test suites): one download.
    (
      flock 9
      fetch_locked
    ) 9>"$CACHE_DIR/fetch.lock"
  else
    fetch_locked
  fi
}

# ---------------------------------------------------------------------------------------------
# process helpers

read_pid() { [[ -f "$PID_FILE" ]] && tr -dc '0-9' <"$PID_FILE" || true; }

# True when $1 is alive and is our broker (guards against a recycled pid).
is_our_broker() {
  local pid="$1"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r "/proc/$pid/cmdline" ]]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$PROPS_FILE"
  else
    ps -p "$pid" -o args= 2>/dev/null | grep -qF -- "$PROPS_FILE"
  fi
}

running_pid() {
  local pid
  pid="$(read_pid)"
  if is_our_broker "$pid"; then printf '%s\n' "$pid"; return 0; fi
  return 1
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

show_log_tail() {
  local f
  for f in "$LOGS_DIR/server.log" "$CONSOLE_LOG"; do
    if [[ -s "$f" ]]; then
      printf '\n----- last 40 lines of %s -----\n' "$f" >&2
      tail -n 40 "$f" >&2
    fi
  done
  printf -- '-----\n' >&2
}

# ---------------------------------------------------------------------------------------------
# configuration and storage

write_properties() {
  mkdir -p "$DATA_DIR" "$LOGS_DIR"
  cat >"$PROPS_FILE.tmp" <<EOF
# Generated by test/broker/kafka-broker.sh for broker '$NAME' (Kafka $KAFKA_VERSION). Do not edit.
process.roles=broker,controller
node.id=$NODE_ID
controller.quorum.voters=$QUORUM_VOTERS
listeners=PLAINTEXT://127.0.0.1:$PORT,SASL_PLAINTEXT://127.0.0.1:$SASL_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$ADVERTISED_PORT,SASL_PLAINTEXT://127.0.0.1:$SASL_PORT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT

sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$SASL_USER" password="$SASL_PASSWORD" user_$SASL_USER="$SASL_PASSWORD";

log.dirs=$DATA_DIR
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=$AUTO_CREATE_TOPICS
delete.topic.enable=true

# A single node: internal topics must not ask for more replicas than there are brokers.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0

# After a crash (SIGKILL) the restarted broker is held back until its previous session expires:
# ~11 s with the default 9 s timeout, ~5 s with 3 s (measured). Heartbeats are loopback-only here.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500

# Small machine, quick start.
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=1048577
# An idle cleaner looks for work every second (Kafka's default: 15 s), so the key topic's erasure
# test sees a destroyed key leave the files within a short bound (docs/kafka.md, the key topic).
log.cleaner.backoff.ms=1000
EOF
  if [[ -n "${KAFKA_EXTRA_PROPERTIES:-}" ]]; then
    printf '\n# KAFKA_EXTRA_PROPERTIES\n%s\n' "$KAFKA_EXTRA_PROPERTIES" >>"$PROPS_FILE.tmp"
  fi
  mv "$PROPS_FILE.tmp" "$PROPS_FILE"
}

new_cluster_id() {
  # 16 random bytes, unpadded base64url, not starting with '-' (Kafka's Uuid rules).
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    [[ "$id" != -* && ${#id} -eq 22 ]] && break
  done
  printf '%s\n' "$id"
}

format_storage() {
  if [[ -f "$DATA_DIR/meta.properties" ]]; then return 0; fi
  local cluster_id="$CLUSTER_ID"
  [[ -n "$cluster_id" ]] || cluster_id="$(new_cluster_id)"
  log "formatting $DATA_DIR (cluster id $cluster_id)"
  if ! "$JAVA" "${HEAP_ARGS[@]}" "${JVM_ARGS[@]}" "-Dkafka.logs.dir=$LOGS_DIR" "-Dlog4j2.configurationFile=$LOG4J_CONFIG" \
      -cp "$LIBS_DIR/*" kafka.tools.StorageTool format -t "$cluster_id" -c "$PROPS_FILE" \
      >"$LOGS_DIR/format.log" 2>&1; then
    cat "$LOGS_DIR/format.log" >&2
    die "kafka-storage format failed"
  fi
}

# ---------------------------------------------------------------------------------------------
# AppCDS: the first start of a given classpath/JVM/flags records the loaded classes into a dynamic
# class-data-sharing archive when the broker exits (written during `down`, ~3 s once); later
# starts map it and reach "ready" about 40% sooner (2.3 s -> 1.4 s measured on 2 cores).
# KAFKA_CDS=0 turns this off.
# The archive lives under the libs dir, so a re-fetch drops it; the JVM itself ignores an archive
# that does not match its build or classpath.

CDS_DIR="$LIBS_DIR/.cds"
CDS_ARCHIVE=""
CDS_TMP=""

cds_init() {
  [[ "$CDS" == 1 ]] || return 0
  local java_path key
  java_path="$(command -v "$JAVA" || true)"
  java_path="$(readlink -f "$java_path" 2>/dev/null || printf '%s' "$java_path")"
  # Not the heap size: a dynamic archive holds class metadata, not heap objects, so a cluster's
  # smaller nodes share the single broker's archive instead of evicting it (one archive at a time).
  key="$(printf '%s|%s|%s' "$LIBS_STAMP" "$java_path" "$JVM_OPTS" | cksum | cut -d ' ' -f 1)"
  CDS_ARCHIVE="$CDS_DIR/broker-$key.jsa"
  CDS_TMP="$CDS_ARCHIVE.$NAME.tmp"
}

cds_flags() {
  [[ -n "$CDS_ARCHIVE" ]] || return 0
  if [[ -s "$CDS_ARCHIVE" ]]; then
    printf '%s\n' "-XX:SharedArchiveFile=$CDS_ARCHIVE" -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off
  else
    mkdir -p "$CDS_DIR"
    rm -f "$CDS_TMP"
    printf '%s\n' "-XX:ArchiveClassesAtExit=$CDS_TMP" -Xlog:cds=off -Xlog:cds+dynamic=off
  fi
}

# `up` notes a pending dump in the run dir; `down` promotes it after a clean (non-SIGKILL)
# stop, when the JVM has finished writing it, or discards it.
CDS_PENDING="$RUN_DIR/cds-pending"

cds_finish() {
  local clean="$1" tmp="" archive=""
  [[ -f "$CDS_PENDING" ]] || return 0
  { IFS= read -r tmp; IFS= read -r archive; } <"$CDS_PENDING" || true
  rm -f "$CDS_PENDING"
  [[ -n "$tmp" && -n "$archive" ]] || return 0
  if [[ "$clean" == 1 && -s "$tmp" && ! -s "$archive" ]]; then
    mv -f "$tmp" "$archive" && log "saved class-data archive $(basename "$archive") for quicker starts"
    # One archive (~50 MB) at a time: drop those of earlier JVMs/flags.
    find "$(dirname "$archive")" -maxdepth 1 -name 'broker-*.jsa' ! -name "$(basename "$archive")" -delete 2>/dev/null || true
  fi
  rm -f "$tmp"
}

# ---------------------------------------------------------------------------------------------
# readiness

ensure_wait_ready() {
  if [[ -f "$WAIT_READY_JS" && ! "$WAIT_READY_TS" -nt "$WAIT_READY_JS" ]]; then return 0; fi
  command -v node >/dev/null 2>&1 || die "node not found"
  log "building the readiness checker (tsc -p $ROOT)"
  # Errors elsewhere in the project must not block the broker: tsc still emits, so only the
  # presence of the output file matters here.
  if [[ -x "$ROOT/node_modules/.bin/tsc" ]]; then
    "$ROOT/node_modules/.bin/tsc" -p "$ROOT" >/dev/null 2>&1 || true
  else
    (cd "$ROOT" && npx --no-install tsc -p "$ROOT") >/dev/null 2>&1 || true
  fi
  [[ -f "$WAIT_READY_JS" ]] || die "could not build $WAIT_READY_JS (run: npx tsc -p $ROOT)"
}

# Polls in short slices so that a broker which dies on start is reported at once.
wait_ready() {
  local pid="$1" deadline now slice
  deadline=$(($(now_ms) + READY_TIMEOUT_MS))
  while :; do
    now="$(now_ms)"
    ((now < deadline)) || return 1
    is_our_broker "$pid" || return 2
    slice=$((deadline - now))
    ((slice > 2000)) && slice=2000
    if node "$WAIT_READY_JS" "127.0.0.1:$PORT" "$slice" 2>/dev/null; then return 0; fi
  done
}

# ---------------------------------------------------------------------------------------------
# commands

# Returns 0 after a clean exit on SIGTERM, 1 when SIGKILL was needed.
stop_pid() {
  local pid="$1" waited=0
  kill -TERM "$pid" 2>/dev/null || true
  while is_our_broker "$pid"; do
    if ((waited >= STOP_TIMEOUT_S * 10)); then
      log "still running after ${STOP_TIMEOUT_S}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      # is_our_broker, not kill -0: the dead JVM may linger as a zombie until init reaps it.
      for ((waited = 0; waited < 100; waited++)); do is_our_broker "$pid" || break; sleep 0.1; done
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  return 0
}

cmd_down() {
  local pid
  if pid="$(running_pid)"; then
    log "stopping pid $pid"
    if stop_pid "$pid"; then
      log "stopped"
      cds_finish 1
    else
      log "killed"
      cds_finish 0
    fi
  else
    log "not running"
    cds_finish 0
  fi
  rm -f "$PID_FILE"
}

cmd_up() {
  local pid
  if [[ "$FRESH" == 1 ]]; then
    running_pid >/dev/null && cmd_down
    log "fresh start: wiping $DATA_DIR"
    rm -rf "$DATA_DIR" "$LOGS_DIR"
  fi
  if pid="$(running_pid)"; then
    log "already running (pid $pid), checking it answers on 127.0.0.1:$PORT"
    ensure_wait_ready
    wait_ready "$pid" || { show_log_tail; die "broker pid $pid is running but does not answer on 127.0.0.1:$PORT"; }
    return 0
  fi
  rm -f "$PID_FILE"
  command -v "$JAVA" >/dev/null 2>&1 || die "Java ('$JAVA') not found: install Java 17+"
  local p
  for p in "$PORT" "$SASL_PORT" "$CONTROLLER_PORT"; do
    port_in_use "$p" && die "port $p on 127.0.0.1 is already in use (another broker? try KAFKA_PORT/KAFKA_CONTROLLER_PORT/KAFKA_SASL_PORT or KAFKA_BROKER_NAME)"
  done
  fetch
  ensure_wait_ready
  write_properties
  format_storage

  local started
  started="$(now_ms)"
  : >"$CONSOLE_LOG"
  local -a cds=()
  local flag
  while IFS= read -r flag; do cds+=("$flag"); done < <(cds_flags)
  rm -f "$CDS_PENDING"
  if [[ " ${cds[*]-} " == *" -XX:ArchiveClassesAtExit="* ]]; then
    printf '%s\n%s\n' "$CDS_TMP" "$CDS_ARCHIVE" >"$CDS_PENDING"
  fi
  if [[ -n "$RUN_AS_UID" ]]; then
    # Another user reads a class-data archive but does not write one (the cache is root's).
    if [[ " ${cds[*]-} " == *" -XX:ArchiveClassesAtExit="* ]]; then cds=(); rm -f "$CDS_PENDING"; fi
    chown -R "$RUN_AS_UID:$RUN_AS_UID" "$RUN_DIR"
  fi
  local -a cmd=("$JAVA" "${HEAP_ARGS[@]}" "${JVM_ARGS[@]}" ${cds[@]+"${cds[@]}"} "-Dkafka.logs.dir=$LOGS_DIR" "-Dlog4j2.configurationFile=$LOG4J_CONFIG"
    -cp "$LIBS_DIR/*" kafka.Kafka "$PROPS_FILE")
  [[ -z "$RUN_AS_UID" ]] || cmd=(setpriv "--reuid=$RUN_AS_UID" "--regid=$RUN_AS_UID" --clear-groups "${cmd[@]}")
  # Own session: a Ctrl-C aimed at the caller does not reach the broker; `down` stops it cleanly.
  # The inner shell writes its own pid and then becomes the JVM, so the pid file is exact.
  # shellcheck disable=SC2016 # $$ and $0 belong to the inner shell
  local launcher=(bash -c 'echo $$ >"$0"; exec "$@"' "$PID_FILE" "${cmd[@]}")
  if command -v setsid >/dev/null 2>&1; then
    nohup setsid "${launcher[@]}" </dev/null >>"$CONSOLE_LOG" 2>&1 &
  else
    nohup "${launcher[@]}" </dev/null >>"$CONSOLE_LOG" 2>&1 &
  fi
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s "$PID_FILE" ]] && break
    sleep 0.1
  done
  pid="$(read_pid)"
  [[ -n "$pid" ]] || { show_log_tail; die "broker did not start (no pid file)"; }
  [[ -z "$WATCH_PID" ]] || start_watch "$pid"
  log "started pid $pid (PLAINTEXT 127.0.0.1:$PORT, SASL_PLAINTEXT 127.0.0.1:$SASL_PORT, controller 127.0.0.1:$CONTROLLER_PORT), waiting until ready"

  local rc=0
  wait_ready "$pid" || rc=$?
  if ((rc != 0)); then
    if ((rc == 2)); then log "broker process exited during start"; else log "broker not ready within ${READY_TIMEOUT_MS} ms"; fi
    show_log_tail
    if running_pid >/dev/null; then stop_pid "$pid" || true; fi
    cds_finish 0
    rm -f "$PID_FILE"
    exit 1
  fi
  log "ready in $(($(now_ms) - started)) ms"
}

# The broker runs in its own session, so a test run killed outright (SIGKILL: no exit hook runs)
# would leave it behind; this detached watcher kills it once the run is gone (or exits with it).
start_watch() {
  local pid="$1" session=()
  command -v setsid >/dev/null 2>&1 && session=(setsid)
  # shellcheck disable=SC2016 # expanded by the watcher's shell
  nohup ${session[@]+"${session[@]}"} bash -c '
    while kill -0 "$0" 2>/dev/null && kill -0 "$1" 2>/dev/null; do sleep 1; done
    # Only our broker: the pid may have been reused once it exited.
    if kill -0 "$1" 2>/dev/null && tr "\0" " " <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"; then
      kill -CONT "$1"; kill -KILL "$1"
    fi' "$WATCH_PID" "$pid" "$PROPS_FILE" </dev/null >/dev/null 2>&1 &
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    printf 'kafka broker %s: running, pid %s, PLAINTEXT 127.0.0.1:%s, SASL_PLAINTEXT 127.0.0.1:%s, controller 127.0.0.1:%s, state %s\n' \
      "$NAME" "$pid" "$PORT" "$SASL_PORT" "$CONTROLLER_PORT" "$RUN_DIR"
    return 0
  fi
  printf 'kafka broker %s: not running (state %s)\n' "$NAME" "$RUN_DIR"
  return 3
}

cmd_logs() {
  [[ -f "$LOGS_DIR/server.log" ]] || die "no log at $LOGS_DIR/server.log"
  tail -n "${LINES_TO_SHOW:-100}" "$LOGS_DIR/server.log"
}

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
}

main() {
  local command="${1:-}"
  case "$command" in
    fetch) validate; fetch; log "libs ready in $LIBS_DIR ($LIBS_STAMP)" ;;
    has-libs) libs_present ;;
    up | start) validate; cds_init; cmd_up ;;
    down | stop) validate; cmd_down ;;
    status) validate; cmd_status ;;
    logs) validate; cmd_logs ;;
    -h | --help | help) usage ;;
    *) usage; exit 2 ;;
  esac
}

main "$@"
