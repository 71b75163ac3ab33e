package chatbot

import (
	_ "embed"
	"net/http"
)

// page is the chat page served at /.
//
//go:embed web/index.html
var page []byte

func servePage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(page)
}
