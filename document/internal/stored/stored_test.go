package stored

import (
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/document"
)

func TestCreate(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	doc := document.Document{ID: "d", ConversationID: "c", Name: "n.txt", ContentType: "text/plain", Status: document.StatusPending, Created: at}
	got, content, err := Create(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Updated.Equal(at) || content == nil || len(content) != 0 {
		t.Errorf("Create = Updated %v, content %#v; want Updated = Created and empty, not nil, content", got.Updated, content)
	}
	doc.ID = ""
	if _, _, err := Create(doc, nil); err == nil {
		t.Error("Create of a document without an ID succeeded")
	}
}

func TestStatus(t *testing.T) {
	if got, err := Status(document.StatusFailed, "boom"); got != "boom" || err != nil {
		t.Errorf("Status(failed) = %q, %v; want the error text", got, err)
	}
	if got, err := Status(document.StatusProcessing, "boom"); got != "" || err != nil {
		t.Errorf("Status(processing) = %q, %v; want no error text", got, err)
	}
	if _, err := Status("bogus", ""); err == nil {
		t.Error("Status of an unknown status succeeded")
	}
	if err := NotFound("d"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("NotFound = %v, want document.ErrNotFound", err)
	}
}
