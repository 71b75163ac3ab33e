// Package otlp sets up OpenTelemetry export over OTLP/HTTP the standard way,
// from the OTEL_* environment variables, and returns a
// [telemetry.Telemetry] that reports to it.
//
// It is a package of its own so that programs that pass their own providers
// to [telemetry.New] do not link the exporters.
//
// The variables read are the SDK's own: OTEL_SDK_DISABLED,
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT), OTEL_EXPORTER_OTLP_HEADERS (for
// example a Langfuse key: "Authorization=Basic ..."),
// OTEL_EXPORTER_OTLP_PROTOCOL (only http/protobuf is served here),
// OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER ("otlp" or "none"),
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. When no endpoint is set
// nothing is exported and the returned Telemetry records nothing.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/agentgraph/agentgraph/agent/telemetry"
)

// Options adjust what [FromEnv] sets up beyond the environment.
type Options struct {
	// ServiceName is the service.name used when OTEL_SERVICE_NAME is unset.
	ServiceName string
	// CaptureContent is passed to telemetry.Config.
	CaptureContent bool
}

// FromEnv builds trace and metric providers exporting over OTLP/HTTP as the
// OTEL_* variables say, and a Telemetry reporting to them. shutdown flushes
// and stops the exporters; call it before the program exits. Without an
// OTLP endpoint in the environment, or with OTEL_SDK_DISABLED=true, it
// returns a Telemetry that records nothing and a shutdown that does nothing.
func FromEnv(ctx context.Context, opts Options) (tel *telemetry.Telemetry, shutdown func(context.Context) error, err error) {
	noop := func(context.Context) error { return nil }
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		tel, err = telemetry.New(telemetry.Config{})
		return tel, noop, err
	}
	if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
		return nil, nil, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_PROTOCOL=%q is not served; set it to http/protobuf or unset it", p)
	}
	traces, err := wants("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if err != nil {
		return nil, nil, err
	}
	metrics, err := wants("OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	if err != nil {
		return nil, nil, err
	}
	if !traces && !metrics {
		tel, err = telemetry.New(telemetry.Config{})
		return tel, noop, err
	}
	name := opts.ServiceName
	if name == "" {
		name = "agentgraph"
	}
	// Environment attributes (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES)
	// come last, so they win over the default name.
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(name)),
		resource.WithFromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("otlp: resource: %w", err)
	}
	cfg := telemetry.Config{CaptureContent: opts.CaptureContent}
	var stops []func(context.Context) error
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("otlp: trace exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		cfg.TracerProvider = tp
		stops = append(stops, tp.Shutdown)
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("otlp: metric exporter: %w", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		cfg.MeterProvider = mp
		stops = append(stops, mp.Shutdown)
	}
	shutdown = func(ctx context.Context) error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop(ctx))
		}
		return errors.Join(errs...)
	}
	tel, err = telemetry.New(cfg)
	if err != nil {
		_ = shutdown(ctx)
		return nil, nil, err
	}
	return tel, shutdown, nil
}

// wants reports whether a signal is to be exported: its exporter variable
// is "otlp" or unset and an endpoint is set for it or for all signals.
func wants(exporterVar, endpointVar string) (bool, error) {
	switch v := strings.ToLower(os.Getenv(exporterVar)); v {
	case "none":
		return false, nil
	case "", "otlp":
	default:
		return false, fmt.Errorf("otlp: %s=%q is not served; set it to otlp or none", exporterVar, v)
	}
	return os.Getenv(endpointVar) != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "", nil
}
