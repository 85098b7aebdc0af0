# mnemo: one binary (cgo, for the ONNX runtime loader) on a small glibc
# base. The ONNX runtime and model are optional at run time (vector rerank is off without them); mount them and set
# MNEMO_ORT_LIB / MNEMO_MODEL_DIR to enable it.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -o /out/mnemo ./cmd/mnemo

FROM gcr.io/distroless/base-debian12
COPY --from=build /out/mnemo /usr/local/bin/mnemo
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/mnemo"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--data-dir", "/data"]
