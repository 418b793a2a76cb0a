# The airunway-render KRM function image: a static binary on scratch,
# running as nobody. kpt runs container functions with `--user nobody`,
# which needs the passwd entry even though the binary never reads it.
#
#   docker build -t airunway-render .                  # from source (needs golang:1.26)
#   buildah bud --target prebuilt -t airunway-render . # copies bin/airunway-render (`make image`)
#
# `prebuilt` comes first so builders that process every stage up to the
# target never need to pull golang:1.26 (machines without registry access).

FROM scratch AS prebuilt
COPY hack/image/passwd /etc/passwd
# Built by `make build` with CGO_ENABLED=0, so it needs no libc.
COPY bin/airunway-render /airunway-render
USER 65534:65534
ENTRYPOINT ["/airunway-render"]

FROM golang:1.26 AS build
WORKDIR /src
# Modules first: the download layer survives source-only changes.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/airunway-render/airunway-render/fn.Version=${VERSION}" \
      -o /out/airunway-render ./cmd/airunway-render

FROM scratch
COPY hack/image/passwd /etc/passwd
COPY --from=build /out/airunway-render /airunway-render
USER 65534:65534
ENTRYPOINT ["/airunway-render"]
