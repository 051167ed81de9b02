#!/usr/bin/env bash
# Runs a command with a real Kafka broker available, then stops the broker.
#
#   test/broker/with-kafka.sh node dist/test/run-tests.js
#
# - KAFKA_BROKERS already set: use that cluster, start nothing, exec the command.
# - else, java and mvn on PATH (mvn is not needed once .cache/kafka/libs is filled): start a
#   fresh broker named `test` on 127.0.0.1 (KAFKA_TEST_PORT/KAFKA_TEST_CONTROLLER_PORT/KAFKA_TEST_SASL_PORT, default 19092/19093/19094,
#   away from a developer's broker on 9092), export KAFKA_BROKERS and KAFKA_SASL_BROKERS (plus
#   KAFKA_SASL_TEST_USER/KAFKA_SASL_TEST_PASSWORD, the PLAIN credentials the SASL listener
#   accepts) to the command, and stop the broker whatever happens.
#   A broker that does not start is an error: the command is not run.
# - else, CI=true: fail (the Kafka suites are mandatory in CI).
# - else: print a loud SKIPPED banner and run the command without KAFKA_BROKERS.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
BROKER_SH="$SCRIPT_DIR/kafka-broker.sh"

if (($# == 0)); then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

if [[ -n "${KAFKA_BROKERS:-}" ]]; then
  exec "$@"
fi

have() { command -v "$1" >/dev/null 2>&1; }
java_ok=0
if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]] || have "${JAVA:-java}"; then java_ok=1; fi
mvn_ok=0
# Maven is only needed to download the broker jars: a filled cache (.cache/kafka/libs) will do.
if have "${MVN:-mvn}" || bash "$BROKER_SH" has-libs; then mvn_ok=1; fi

if ((java_ok == 0 || mvn_ok == 0)); then
  missing=()
  ((java_ok == 1)) || missing+=("java (17+)")
  ((mvn_ok == 1)) || missing+=("mvn")
  if [[ "${CI:-}" == true ]]; then
    {
      echo "with-kafka: ERROR: CI=true but ${missing[*]} not found on PATH."
      echo "with-kafka: the Kafka suites are mandatory in CI: install Java 17 and Maven, or set KAFKA_BROKERS."
    } >&2
    exit 1
  fi
  headline="$(printf '%-71s' "KAFKA SUITES SKIPPED: ${missing[*]} not found on PATH.")"
  cat >&2 <<EOF

##############################################################################
##                                                                          ##
##   ${headline}##
##                                                                          ##
##   The tests below run WITHOUT a Kafka broker (KAFKA_BROKERS is unset),   ##
##   so everything that talks to Kafka is skipped. To run them:             ##
##     - install Java 17+ and Maven (Debian: apt-get install                ##
##       openjdk-17-jre-headless maven); a broker is then started from      ##
##       Maven Central jars automatically, or                               ##
##     - point at a running broker: KAFKA_BROKERS=127.0.0.1:9092 ...        ##
##   (CI=true turns this skip into a failure.)                              ##
##                                                                          ##
##############################################################################

EOF
  exec "$@"
fi

port="${KAFKA_TEST_PORT:-19092}"
controller_port="${KAFKA_TEST_CONTROLLER_PORT:-19093}"
sasl_port="${KAFKA_TEST_SASL_PORT:-19094}"
# The broker settings go to kafka-broker.sh only, not into the command's environment.
broker() {
  KAFKA_BROKER_NAME=test KAFKA_PORT="$port" KAFKA_CONTROLLER_PORT="$controller_port" KAFKA_SASL_PORT="$sasl_port" \
    bash "$BROKER_SH" "$@"
}

stopped=0
# shellcheck disable=SC2329 # invoked from traps
stop_broker() {
  ((stopped == 0)) || return 0
  stopped=1
  # Never let a failing stop mask the command's exit code; the SIGKILL fallback is inside.
  broker down || echo "with-kafka: WARNING: stopping the test broker failed" >&2
}
child=""
# shellcheck disable=SC2329 # invoked from traps
on_signal() {
  local code="$1"
  trap - INT TERM
  # The command runs in the background (so `timeout`'s SIGTERM to this script is acted on
  # at once); pass the signal on, give it a moment to clean up, then stop the broker.
  if [[ -n "$child" ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$child" 2>/dev/null || true
  fi
  stop_broker
  exit "$code"
}
trap 'stop_broker' EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

if ! KAFKA_BROKER_FRESH=1 broker up; then
  echo "with-kafka: ERROR: the test Kafka broker did not start; not running: $*" >&2
  exit 1
fi

export KAFKA_BROKERS="127.0.0.1:$port"
export KAFKA_SASL_BROKERS="127.0.0.1:$sasl_port"
# The credentials the SASL listener accepts. Deliberately not KAFKA_SASL_USERNAME/PASSWORD: those
# configure the service itself, and a test decides when to pass them.
export KAFKA_SASL_TEST_USER="${KAFKA_SASL_TEST_USER:-reports}"
export KAFKA_SASL_TEST_PASSWORD="${KAFKA_SASL_TEST_PASSWORD:-reports-secret}"

# Not exec: the EXIT trap must run after the command to stop the broker. The command keeps this
# script's stdin (a background job would otherwise get /dev/null).
set +e
"$@" <&0 &
child=$!
wait "$child"
rc=$?
set -e
exit "$rc"
