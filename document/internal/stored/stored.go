// Package stored holds what the SQL stores of documents (document/postgres,
// document/sqlite) do the same way: the checks and defaults of what they
// write, and the error of a document they do not hold.
package stored

import (
	"fmt"

	"github.com/agentgraph/agentgraph/document"
)

// Create checks a document and its content for [document.Store.Create]
// and returns them as they are stored: Updated defaults to Created, and
// nil content is stored as empty.
func Create(doc document.Document, content []byte) (document.Document, []byte, error) {
	if err := document.CheckCreate(doc, content); err != nil {
		return doc, nil, err
	}
	if doc.Updated.IsZero() {
		doc.Updated = doc.Created
	}
	if content == nil {
		content = []byte{}
	}
	return doc, content, nil
}

// Status checks a status for [document.Store.SetStatus] and returns the
// error text stored with it: errText for [document.StatusFailed], empty
// for any other.
func Status(status document.Status, errText string) (string, error) {
	if err := document.CheckStatus(status); err != nil {
		return "", err
	}
	if status != document.StatusFailed {
		errText = ""
	}
	return errText, nil
}

// NotFound is the error of a document id that the store does not hold.
func NotFound(id string) error {
	return fmt.Errorf("%w: no document with id %q", document.ErrNotFound, id)
}
