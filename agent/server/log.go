package server

import "go.uber.org/zap"

func zapString(k, v string) zap.Field  { return zap.String(k, v) }
func zapError(err error) zap.Field     { return zap.Error(err) }
func zapInt(k string, v int) zap.Field { return zap.Int(k, v) }
