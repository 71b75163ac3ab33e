package offline

import (
	"net/http"
	"strings"
	"testing"
)

func TestTransportHandlerPanics(t *testing.T) {
	tr := handlerTransport{h: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })}
	req, _ := http.NewRequest(http.MethodGet, "http://offline/x", nil)
	if _, err := tr.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("err = %v, want the panic", err)
	}
}
