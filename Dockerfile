# syntax=docker/dockerfile:1
# Multi-stage build of the one crawlq binary; the image runs any subcommand:
#   docker run --rm crawlq:local crawlq status --redis redis://host:6379/0
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/crawlq ./cmd/crawlq

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/crawlq /usr/local/bin/crawlq
USER nonroot
EXPOSE 8080 9100
CMD ["crawlq", "--help"]
