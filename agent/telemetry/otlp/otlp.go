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
//
// Two defaults differ from the SDK's, so that a program exporting to a
// collector stays bounded: span attribute values are cut to
// [DefaultAttributeValueLengthLimit] characters unless
// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT or
// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT says otherwise (the SDK keeps them
// whole), and the shutdown FromEnv returns gives up after
// [DefaultShutdownTimeout] when its context has no deadline.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/agentgraph/agentgraph/agent/telemetry"
)

// DefaultAttributeValueLengthLimit is the span attribute value length
// limit (in characters) FromEnv sets when neither
// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT nor
// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT is set: a longer string value is cut
// to it. Content captured as events is bounded by
// telemetry.MaxContentBytes.
const DefaultAttributeValueLengthLimit = 16 << 10

// DefaultShutdownTimeout bounds the shutdown FromEnv returns when its
// context has no deadline: against a collector that is down or refuses
// the export, the exporters would otherwise retry for minutes. Pass a
// context with a deadline to wait longer or shorter.
const DefaultShutdownTimeout = 10 * time.Second

// Options adjust what [FromEnv] sets up beyond the environment.
type Options struct {
	// ServiceName is the service.name used when OTEL_SERVICE_NAME is unset.
	ServiceName string
	// CaptureContent is passed to telemetry.Config.
	CaptureContent bool
}

// FromEnv builds trace and metric providers exporting over OTLP/HTTP as the
// OTEL_* variables say, and a Telemetry reporting to them. shutdown flushes
// and stops the exporters, traces and metrics at once; call it before the
// program exits. It returns when ctx is done or, when ctx has no
// deadline, after DefaultShutdownTimeout, with the error of what was not
// flushed. Without an
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
	var stops []stop
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("otlp: trace exporter: %w", err)
		}
		opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
		if os.Getenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT") == "" && os.Getenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT") == "" {
			limits := sdktrace.NewSpanLimits() // the other limits as the environment says
			limits.AttributeValueLengthLimit = DefaultAttributeValueLengthLimit
			opts = append(opts, sdktrace.WithRawSpanLimits(limits))
		}
		tp := sdktrace.NewTracerProvider(opts...)
		cfg.TracerProvider = tp
		stops = append(stops, stop{"traces", tp.Shutdown})
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("otlp: metric exporter: %w", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		cfg.MeterProvider = mp
		stops = append(stops, stop{"metrics", mp.Shutdown})
	}
	shutdown = shutdownAll(stops, DefaultShutdownTimeout)
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

// stop is a provider's Shutdown and the signal it exports.
type stop struct {
	signal   string
	shutdown func(context.Context) error
}

// shutdownAll returns a shutdown that runs every stop at once and waits
// for them all, bounded by ctx or, when ctx has no deadline, by limit.
func shutdownAll(stops []stop, limit time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, limit,
				fmt.Errorf("otlp: shutdown gave up after %s (DefaultShutdownTimeout); pass a context with a longer deadline to wait longer", limit))
			defer cancel()
		}
		errs := make([]error, len(stops))
		var wg sync.WaitGroup
		for i, s := range stops {
			wg.Go(func() {
				if err := s.shutdown(ctx); err != nil {
					if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() && !strings.Contains(err.Error(), cause.Error()) {
						err = fmt.Errorf("%w (%w)", err, cause)
					}
					errs[i] = fmt.Errorf("otlp: %s shutdown: %w", s.signal, err)
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
}
