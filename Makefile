# Benchmarks are programs that print figures, not tests: see docs/benchmarks.md.
#
#   make bench                          the full comparison (about 26 minutes on 2 cores)
#   make bench-quick                    about 4 minutes, for a first look
#   make bench BENCH_FLAGS='-scenarios tasks -tasks 4 -systems pipe,kmirror'
#
# Both start the harness in $(BENCH_HARNESS) unless it already runs there, and stop it afterwards if they
# started it. Results (markdown, JSON, logs, configs) go to a new /tmp/kmirror-bench-<time> directory.

BENCH_HARNESS ?= /tmp/kmbench
BENCH_FLAGS ?=

# No kmirror image is published: `make image` builds one from the Dockerfile, to push to your registry.
#
#   make image IMAGE=registry.example/kmirror:0.1.0-dev && docker push registry.example/kmirror:0.1.0-dev
#
# DOCKER may name another client with the same build syntax (podman).
VERSION ?= $(shell sed -n 's/^var Version = "\(.*\)"$$/\1/p' server/buildinfo.go)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
IMAGE ?= kmirror:$(VERSION)
DOCKER ?= docker

.PHONY: bench bench-quick chaos image

image:
	$(DOCKER) build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE) .

bench:
	go run ./bench -harness-dir $(BENCH_HARNESS) $(BENCH_FLAGS)

bench-quick:
	go run ./bench -harness-dir $(BENCH_HARNESS) -records 200000 -small-records 100000 -repeat 1 -tasks 1,4 \
		-latency 5s -many-topics 10 $(BENCH_FLAGS)

# The fault suite at full size (larger volumes, 5 iterations of each kill case); go test ./... runs its short form.
chaos:
	go test -count=1 -v -timeout 120m ./chaos -args -chaos.long
