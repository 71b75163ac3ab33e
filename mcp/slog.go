package mcp

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapHandler is a slog.Handler writing to a zap logger, so that mcp-go's
// transports log where the manager logs instead of to slog.Default.
type zapHandler struct {
	log   *zap.Logger
	attrs []zap.Field
}

func slogger(log *zap.Logger) *slog.Logger { return slog.New(&zapHandler{log: log}) }

func zapLevel(l slog.Level) zapcore.Level {
	switch {
	case l >= slog.LevelError:
		return zapcore.ErrorLevel
	case l >= slog.LevelWarn:
		return zapcore.WarnLevel
	case l >= slog.LevelInfo:
		// mcp-go logs routine transport events at info; they are debug
		// detail for an application.
		return zapcore.DebugLevel
	default:
		return zapcore.DebugLevel
	}
}

func (h *zapHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.log.Core().Enabled(zapLevel(l))
}

func (h *zapHandler) Handle(_ context.Context, r slog.Record) error {
	fields := append([]zap.Field(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		fields = append(fields, zap.Any(a.Key, a.Value.Any()))
		return true
	})
	if ce := h.log.Check(zapLevel(r.Level), "mcp-go: "+r.Message); ce != nil {
		ce.Write(fields...)
	}
	return nil
}

func (h *zapHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := &zapHandler{log: h.log, attrs: append([]zap.Field(nil), h.attrs...)}
	for _, a := range attrs {
		n.attrs = append(n.attrs, zap.Any(a.Key, a.Value.Any()))
	}
	return n
}

func (h *zapHandler) WithGroup(name string) slog.Handler {
	return &zapHandler{log: h.log.Named(name), attrs: h.attrs}
}
