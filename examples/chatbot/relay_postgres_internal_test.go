package chatbot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// TestPGRelayStartFailsWhenPostgresDoesNotAnswer: the relay's first LISTEN
// failing is startPGRelay's error, returned at once rather than retried
// until its context ends.
func TestPGRelayStartFailsWhenPostgresDoesNotAnswer(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // failure guard only
	defer cancel()
	r, err := startPGRelay(ctx, pool, "s", zap.NewNop(), func([]byte) ([]byte, bool) { return nil, false })
	if err == nil {
		r.close()
		t.Fatal("the relay started with no PostgreSQL to listen on")
	}
	if ctx.Err() != nil || !strings.Contains(err.Error(), "LISTEN chatbot_relay_") {
		t.Errorf("error %v (context %v); want the LISTEN's own failure, before the context ended", err, ctx.Err())
	}
}
