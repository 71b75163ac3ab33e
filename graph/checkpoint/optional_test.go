package checkpoint_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

func TestOptionalInterfaces(t *testing.T) {
	ctx := context.Background()
	mem := checkpoint.NewMemory()
	if _, err := checkpoint.Prune(ctx, mem, checkpoint.Retention{KeepLatest: 1}); err != nil {
		t.Errorf("Prune on Memory: %v", err)
	}
	if u, err := checkpoint.ThreadUsage(ctx, mem, "none"); err != nil || u != (checkpoint.Usage{}) {
		t.Errorf("ThreadUsage on Memory = %+v, %v; want zero", u, err)
	}
	core := coreOnly{mem}
	_, err := checkpoint.Prune(ctx, core, checkpoint.Retention{KeepLatest: 1})
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "checkpoint.Pruner") || !strings.Contains(err.Error(), "coreOnly") {
		t.Errorf("Prune on a Saver without Prune: %v; want ErrUnsupported naming checkpoint.Pruner and the type", err)
	}
	_, err = checkpoint.ThreadUsage(ctx, core, "t")
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "checkpoint.UsageReporter") {
		t.Errorf("ThreadUsage on a Saver without Usage: %v; want ErrUnsupported naming checkpoint.UsageReporter", err)
	}
}

func TestCorruptError(t *testing.T) {
	detail := errors.New(`channel "m": the delta written by checkpoint #3 applies to itself`)
	err := error(&checkpoint.CorruptError{ThreadID: "t", CheckpointID: "c3", Err: detail})
	if !errors.Is(err, checkpoint.ErrCorrupt) || !errors.Is(err, detail) {
		t.Errorf("errors.Is(%v, ErrCorrupt / detail) = false", err)
	}
	if errors.Is(err, checkpoint.ErrNotFound) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v is not a missing checkpoint nor a deadline", err)
	}
	for _, want := range []string{`thread "t"`, `checkpoint "c3"`, "corrupt", `channel "m"`, "backup"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
	untraced := (&checkpoint.CorruptError{ThreadID: "t", Err: detail}).Error()
	if strings.Contains(untraced, "checkpoint \"\"") || !strings.Contains(untraced, `thread "t" is corrupt`) {
		t.Errorf("error without a checkpoint: %q", untraced)
	}
}

// TestDecodeBuildsOnlyCallerTypes checks that stored bytes naming types, in
// the ways other serialisation formats honour, still decode into nothing
// but the caller's type and the plain JSON values of its untyped fields.
func TestDecodeBuildsOnlyCallerTypes(t *testing.T) {
	type state struct {
		Name  string
		Extra any
		Items []any
	}
	data := []byte(`{"Name":"x","Extra":{"@type":"os/exec.Cmd","Path":"/bin/sh","Args":["-c","id"]},
		"Items":[{"$type":"System.Diagnostics.Process, System"},{"__class__":"subprocess.Popen"},1,"s",true,null,[{"py/object":"os.system"}]]}`)
	got, err := checkpoint.Decode[state](checkpoint.JSON, data)
	if err != nil {
		t.Fatal(err)
	}
	var check func(path string, v any)
	check = func(path string, v any) {
		switch x := v.(type) {
		case nil, string, float64, bool:
		case map[string]any:
			for k, e := range x {
				check(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				check(path+"[]", e)
			}
		default:
			t.Errorf("%s decoded as %T; want only plain JSON values", path, v)
		}
	}
	check("Extra", got.Extra)
	check("Items", got.Items)
	if _, ok := got.Extra.(map[string]any); !ok || got.Name != "x" || len(got.Items) != 7 {
		t.Errorf("decoded %#v", got)
	}
}
