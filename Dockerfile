# syntax=docker/dockerfile:1
# kmirror: MirrorMaker 2 as a service. Multi-stage build: cgo (librdkafka is linked statically by
# confluent-kafka-go on glibc), then a small glibc runtime that runs as a non-root user.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
ARG COMMIT=
RUN CGO_ENABLED=1 go build -trimpath \
      -ldflags "-s -w -X github.com/kmirror/kmirror/server.Version=${VERSION} -X github.com/kmirror/kmirror/server.commit=${COMMIT}" \
      -o /out/kmirror ./cmd/kmirror

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin kmirror
COPY --from=build /out/kmirror /usr/local/bin/kmirror
USER 10001:10001
EXPOSE 8083
# A container listens beyond loopback, so serve refuses to start until it is told how callers authenticate:
# KMIRROR_REST_USERS_FILE (a mounted users file), or KMIRROR_REST_ALLOW_UNAUTHENTICATED=true (docs/security.md).
ENV KMIRROR_LISTEN=:8083
# /health answers 200 only once the worker has joined the cluster and its database answers (KIP-1017).
# Without --url, `kmirror health` reads KMIRROR_LISTEN and KMIRROR_TLS_CERT as serve does: HTTP, or HTTPS
# trusting exactly the served certificate when TLS is on.
HEALTHCHECK --interval=15s --timeout=12s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/kmirror", "health"]
ENTRYPOINT ["/usr/local/bin/kmirror"]
CMD ["serve"]
