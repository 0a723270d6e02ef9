# syntax=docker/dockerfile:1
# A static kontermatt binary on a distroless base: no shell, no package manager, a non-root user.
# The database lives on the /data volume; SIGTERM stops the platforms, lets the outboxes drain and
# closes the database (give it the stop grace period compose.yaml sets).
#
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t kontermatt .
#   docker run -e KONTERMATT_TELEGRAM_TOKEN=... -v kontermatt-data:/data kontermatt

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG REVISION=""
# The revision comes in as an argument: the build context carries no .git (see .dockerignore).
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w -X main.revision=${REVISION}" \
      -o /out/kontermatt ./cmd/bot \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kontermatt /kontermatt
# A named volume takes the owner of the image's directory: the nonroot user (65532) may write it.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME /data
ENV KONTERMATT_DATABASE=/data/kontermatt.db \
    KONTERMATT_LOG_FORMAT=json
USER nonroot:nonroot
STOPSIGNAL SIGTERM
ENTRYPOINT ["/kontermatt"]
