//go:build !unix

package server_test

import "testing"

func startJSServer(tb testing.TB) string {
	tb.Skip("the JS server comparison runs on Unix only")
	return ""
}
