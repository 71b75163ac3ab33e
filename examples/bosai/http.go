package bosai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// MaxRequestBytes bounds the body of a request to Handler.
const MaxRequestBytes = 1 << 20

// Handler serves Bos-AI over HTTP (the seed's API client layer):
//
//	POST /v1/ask   a Request as JSON
//
// It answers with the Response as JSON or, when the request accepts
// text/event-stream, with a server-sent event per trace event ("trace")
// and the response last ("response"); a failed run ends the stream with an
// "error" event. A request that fails validation (Request.Validate, or
// JSON with unknown fields) gets 400 and {"error": "..."}.
func Handler(b *Bot) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/ask", func(w http.ResponseWriter, r *http.Request) {
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
		dec.DisallowUnknownFields()
		var req Request
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("request body: %w", err))
			return
		}
		req = req.Normalize()
		if err := req.Validate(); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		if r.Header.Get("Accept") == "text/event-stream" {
			serveSSE(w, r, b, req)
			return
		}
		resp, err := b.Ask(r.Context(), req)
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, ErrClosed) {
				code = http.StatusServiceUnavailable
			}
			writeError(w, code, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	return mux
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

func serveSSE(w http.ResponseWriter, r *http.Request, b *Bot, req Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(event string, v any) bool {
		data, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	for ev, err := range b.Run(r.Context(), req) {
		if err != nil {
			send("error", map[string]string{"error": err.Error()})
			return
		}
		if ev.Trace != nil && !send("trace", ev.Trace) {
			return
		}
		if ev.Response != nil {
			send("response", ev.Response)
		}
	}
}
