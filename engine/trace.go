package engine

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Tracing: ingest and search open OpenTelemetry spans on the global tracer
// provider. Until a provider is installed (cmd/mnemo does when an OTLP
// endpoint is configured) the global one is a no-op and a span costs a few
// nanoseconds. Spans carry counts, modes and outcomes, never content, ids
// or principals.
var tracer = otel.Tracer("github.com/mnemo-dev/mnemo/engine")

// startSpan opens span name under ctx; the returned end records err (if
// any, as its class) and attrs, and closes it.
func startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, func(err error, attrs ...attribute.KeyValue)) {
	ctx, span := tracer.Start(ctx, name, trace.WithAttributes(attrs...))
	return ctx, func(err error, attrs ...attribute.KeyValue) {
		if span.IsRecording() {
			span.SetAttributes(attrs...)
			if err != nil {
				// The failure's class, not its message: messages may
				// quote ids or fields of the request.
				span.SetStatus(codes.Error, failure(err))
			}
		}
		span.End()
	}
}
