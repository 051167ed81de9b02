# One-liners around package.json scripts, which hold the truth.
.PHONY: run test lint bench bench-start chaos build build-src install schemathesis kafka-up kafka-down run-kafka clean

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

install: node_modules/.package-lock.json

build: install
	npm run build

# build-src: the service alone (src/ and projections/), without the tests
build-src: install
	npm run build:src

## run: install, build the service (not the tests) and start it on the embedded log at 127.0.0.1:8080
run: build-src
	npm start

## test: the whole suite (starts a throw-away Kafka broker unless KAFKA_BROKERS is set) with coverage
test: install
	npm test

## lint: type-aware linting of src/, projections/ and test/ (typescript-eslint) and the formatting check (Prettier); `make test` runs it first
lint: install
	npm run lint

## schemathesis: the OpenAPI fuzzer `make test` runs, from PyPI into .cache/schemathesis (needs python3 with venv)
schemathesis:
	npm run schemathesis:install

## bench: POST /reports throughput and tail latency of the service against bare Koa and Koa + PostgreSQL
bench: build
	npm run bench

## bench-start: replay speed, start-up time and memory on a history of BENCH_EVENTS (1,000,000) events
bench-start: build
	npm run bench:start

## chaos: the cluster fault suite, long form: a three-node KRaft cluster, every fault scenario 3 times
## (CHAOS_ARGS='--runs 1 --scenario pause-leader'), and the table; `make test` runs its short form
chaos: build
	npm run chaos -- $(CHAOS_ARGS)

## kafka-up / kafka-down: a local single-node Kafka broker on 127.0.0.1:9092 (needs Java 17 and Maven)
kafka-up: build
	bash test/broker/kafka-broker.sh up

kafka-down:
	bash test/broker/kafka-broker.sh down

## run-kafka: the service on the local broker
run-kafka: kafka-up
	KAFKA_BROKERS=$${KAFKA_BROKERS:-127.0.0.1:9092} npm start

clean:
	rm -rf dist coverage
