package main

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func zapcoreFor(cfg zapcore.EncoderConfig, w io.Writer, level zapcore.Level) zapcore.Core {
	return zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), zapcore.AddSync(w), zap.NewAtomicLevelAt(level))
}
