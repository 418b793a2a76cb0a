# The images of airunway-render, all static binaries on scratch:
#
#   function        the KRM function (ENTRYPOINT airunway-render; user nobody,
#                   which kpt passes as `--user nobody`, so /etc/passwd has it)
#   argocd-plugin   the Argo CD Config Management Plugin sidecar: the binary on
#                   PATH and plugin.yaml where argocd-cmp-server reads it; user
#                   999 as Argo CD requires; the entrypoint comes from Argo CD
#   status-reporter the status reporter controller (deploy/base)
#
# From source, with Docker or buildah (needs the golang:1.26 image):
#   docker build --target function -t airunway-render .
#   docker build --target argocd-plugin -t airunway-render-argocd-plugin .
#   docker build --target status-reporter -t airunway-status-reporter .
# Without registry access, `make image` builds the *-prebuilt stages from the
# binaries `make build` made. They come first, so builders that process every
# stage up to the target never need to pull golang:1.26.

FROM scratch AS prebuilt
COPY hack/image/passwd hack/image/group /etc/
# Built by `make build` with CGO_ENABLED=0, so it needs no libc.
COPY bin/airunway-render /airunway-render
USER 65534:65534
ENTRYPOINT ["/airunway-render"]

FROM scratch AS argocd-plugin-prebuilt
COPY hack/image/passwd hack/image/group /etc/
COPY bin/airunway-render /usr/local/bin/airunway-render
COPY examples/argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
# argocd-cmp-server finds the plugin's commands through PATH.
ENV PATH=/usr/local/bin
USER 999:999

FROM scratch AS status-reporter-prebuilt
COPY hack/image/passwd hack/image/group /etc/
COPY bin/airunway-status-reporter /airunway-status-reporter
USER 65534:65534
ENTRYPOINT ["/airunway-status-reporter"]

FROM golang:1.26 AS build
WORKDIR /src
# Modules first: the download layer survives source-only changes.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN for cmd in airunway-render airunway-status-reporter; do \
      CGO_ENABLED=0 go build -trimpath \
        -ldflags "-s -w -X github.com/airunway-render/airunway-render/internal/version.Version=${VERSION}" \
        -o /out/$cmd ./cmd/$cmd || exit 1; \
    done

FROM scratch AS argocd-plugin
COPY hack/image/passwd hack/image/group /etc/
COPY --from=build /out/airunway-render /usr/local/bin/airunway-render
COPY examples/argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
ENV PATH=/usr/local/bin
USER 999:999

FROM scratch AS status-reporter
COPY hack/image/passwd hack/image/group /etc/
COPY --from=build /out/airunway-status-reporter /airunway-status-reporter
USER 65534:65534
ENTRYPOINT ["/airunway-status-reporter"]

# Last, so a plain `docker build .` builds the function image.
FROM scratch AS function
COPY hack/image/passwd hack/image/group /etc/
COPY --from=build /out/airunway-render /airunway-render
USER 65534:65534
ENTRYPOINT ["/airunway-render"]
