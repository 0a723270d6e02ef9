# syntax=docker/dockerfile:1
# A static kontermatt binary on a distroless base: no shell, no package manager, a non-root user.
# The database lives on the /data volume; SIGTERM stops the platforms, lets the outboxes drain and
# closes the database (give it the stop grace period compose.yaml sets).
#
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t kontermatt .
#   docker run -e KONTERMATT_TELEGRAM_TOKEN=... -v kontermatt-data:/data kontermatt
#
# Both base images are pinned by digest, so that a rebuild of this commit gets the same bases. The
# digests were not read from the registries (the machine this was written on reaches none): they
# are the ones public projects pin for these tags — golang:1.26.8 as cilium v1.20.2 pins it
# (images/runtime/Dockerfile), distroless static-debian12:nonroot as `crane digest` gave it on
# 2026-08-26. HOST: check them before you trust them, and to move on to newer bases:
#   docker buildx imagetools inspect golang:1.26.8              # or: crane digest golang:1.26.8
#   docker buildx imagetools inspect gcr.io/distroless/static-debian12:nonroot
# The Go tag follows go.mod's go line: the image sets GOTOOLCHAIN=local and builds with no other Go.

FROM golang:1.26.8@sha256:3c3e25a4da13fd0478eed2df1eb35a0e667094a7124d3993a6a1d30f71c17e79 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG REVISION=""
# The revision comes in as an argument: the build context carries no .git (see .dockerignore).
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w -X main.revision=${REVISION}" \
      -o /out/kontermatt ./cmd/bot \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/kontermatt /kontermatt
# A named volume takes the owner of the image's directory: the nonroot user (65532) may write it.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME /data
ENV KONTERMATT_DATABASE=/data/kontermatt.db \
    KONTERMATT_LOG_FORMAT=json
# The working directory holds what is not in the store: with store etcd the admin socket
# (kontermatt.sock) and a live backup's snapshot.
WORKDIR /data
USER nonroot:nonroot
STOPSIGNAL SIGTERM
# The image has no shell and no curl: the bot itself asks the running bot over its admin socket
# (/data/kontermatt.db.sock) and exits 0 when the database and every platform are fine.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 CMD ["/kontermatt", "health"]
ENTRYPOINT ["/kontermatt"]
