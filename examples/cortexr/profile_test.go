package cortexr_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/cortexr"
)

func TestProfile(t *testing.T) {
	p, err := cortexr.LoadProfile("config/profiles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg cortexr.Config
	if err := p.Apply(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Strategy != cortexr.StrategySequential || cfg.MemoryFallback || cfg.MaxSteps != 3 || cfg.Lifelines != 3 || cfg.MemoryDir != "memory" || cfg.Persona.Tone != "concise" || len(cfg.Servers) != 3 {
		t.Fatalf("config %+v", cfg)
	}
	cfg.MemoryDir = t.TempDir()
	a := newAgent(t, cfg)
	if _, ans := run(t, a, "Compute the factorial of 6"); ans.Text != "720" {
		t.Fatalf("answer %+v", ans)
	}

	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "p.yaml")
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	if _, err := cortexr.LoadProfile(write("strategy:\n  planing_mode: conservative\n")); err == nil || !strings.Contains(err.Error(), "planing_mode") {
		t.Errorf("misspelt key: %v", err)
	}
	p, _ = cortexr.LoadProfile(write("strategy:\n  planning_mode: exploratory\n  exploration_mode: parallel\n  memory_fallback_enabled: true\nmcp_servers:\n  - id: math\n"))
	cfg = cortexr.Config{}
	if err := p.Apply(&cfg); err != nil || cfg.Strategy != cortexr.StrategyParallel || !cfg.MemoryFallback || len(cfg.Servers) != 1 || cfg.Servers[0].Name != "math" {
		t.Errorf("parallel profile: %+v, %v", cfg, err)
	}
	p, _ = cortexr.LoadProfile(write("mcp_servers:\n  - id: weather\n"))
	if err := p.Apply(&cortexr.Config{}); err == nil || !strings.Contains(err.Error(), "give a command (stdio) or a url") {
		t.Errorf("server without command: %v", err)
	}
}
