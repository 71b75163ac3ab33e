package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// Open a checkpoint file, save a checkpoint, and read it back after
// reopening the file, as a restarted process would.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "checkpoints")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "checkpoints.db")
	ctx := context.Background()

	saver, err := sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		log.Fatal(err)
	}
	cp := &checkpoint.Checkpoint{ThreadID: "order-7", Step: 1, Versions: map[string]uint64{"status": 1}}
	err = saver.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "status", Kind: checkpoint.Full, Data: []byte(`"paid"`)}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	saver.Close()

	saver, err = sqlite.New(ctx, sqlite.Config{Path: path})
	if err != nil {
		log.Fatal(err)
	}
	defer saver.Close()
	snap, err := saver.Get(ctx, "order-7", "")
	if err != nil {
		log.Fatal(err)
	}
	status, err := checkpoint.Decode[string](checkpoint.JSON, snap.Channels["status"].Base)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(snap.Step, status, snap.ID == cp.ID)
	// Output:
	// 1 paid true
}
