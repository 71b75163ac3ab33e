package cortexr

import (
	"fmt"
	"os"
	"slices"

	"go.yaml.in/yaml/v4"

	"github.com/agentgraph/agentgraph/mcp"
)

// Profile is the seed's config/profiles.yaml: the agent's identity,
// strategy, memory, persona and MCP servers. Unknown keys are errors.
type Profile struct {
	Agent struct {
		Name        string `yaml:"name"`
		ID          string `yaml:"id"`
		Description string `yaml:"description"`
	} `yaml:"agent"`
	Strategy struct {
		PlanningMode          string `yaml:"planning_mode"`
		ExplorationMode       string `yaml:"exploration_mode"`
		MemoryFallbackEnabled bool   `yaml:"memory_fallback_enabled"`
		// MemoryFallbackAcrossSessions extends the fallback to earlier
		// sessions (not in the seed).
		MemoryFallbackAcrossSessions bool `yaml:"memory_fallback_across_sessions"`
		MaxSteps                     int  `yaml:"max_steps"`
		MaxLifelinesPerStep          int  `yaml:"max_lifelines_per_step"`
	} `yaml:"strategy"`
	Memory struct {
		Storage struct {
			BaseDir string `yaml:"base_dir"`
		} `yaml:"storage"`
	} `yaml:"memory"`
	Persona Persona `yaml:"persona"`
	// MCPServers lists the servers: the built-in ids math, websearch and
	// documents need nothing else; any other server gives a command (stdio)
	// or a url.
	MCPServers []ProfileServer `yaml:"mcp_servers"`
}

// ProfileServer is one entry of a profile's mcp_servers.
type ProfileServer struct {
	ID          string   `yaml:"id"`
	Description string   `yaml:"description"`
	Command     string   `yaml:"command"`
	Args        []string `yaml:"args"`
	Dir         string   `yaml:"cwd"`
	URL         string   `yaml:"url"`
}

// LoadProfile reads a profiles.yaml file.
func LoadProfile(path string) (Profile, error) {
	var p Profile
	f, err := os.Open(path)
	if err != nil {
		return p, fmt.Errorf("cortexr: profile: %w", err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("cortexr: profile %s: %w", path, err)
	}
	return p, nil
}

// Apply sets cfg's fields the profile configures: strategy, memory
// fallback, steps, lifelines, memory directory, persona and servers.
// A profile that lists mcp_servers replaces cfg.Servers with them: the
// built-in ids (math, websearch, documents) are the in-process servers of
// DefaultServers, the others stdio or HTTP servers.
func (p Profile) Apply(cfg *Config) error {
	if p.Strategy.PlanningMode != "" {
		s, err := ParseStrategy(p.Strategy.PlanningMode, p.Strategy.ExplorationMode)
		if err != nil {
			return fmt.Errorf("cortexr: profile strategy: %w", err)
		}
		cfg.Strategy = s
	}
	cfg.MemoryFallback = p.Strategy.MemoryFallbackEnabled
	cfg.MemoryFallbackAcrossSessions = p.Strategy.MemoryFallbackAcrossSessions
	if p.Strategy.MaxSteps < 0 || p.Strategy.MaxLifelinesPerStep < 0 {
		return fmt.Errorf("cortexr: profile strategy: max_steps (%d) and max_lifelines_per_step (%d) must not be negative", p.Strategy.MaxSteps, p.Strategy.MaxLifelinesPerStep)
	}
	if p.Strategy.MaxSteps > 0 {
		cfg.MaxSteps = p.Strategy.MaxSteps
	}
	if p.Strategy.MaxLifelinesPerStep > 0 {
		cfg.Lifelines = p.Strategy.MaxLifelinesPerStep
	}
	if p.Memory.Storage.BaseDir != "" {
		cfg.MemoryDir = p.Memory.Storage.BaseDir
	}
	cfg.Persona = p.Persona
	if len(p.MCPServers) == 0 {
		return nil
	}
	defaults, err := DefaultServers(*cfg)
	if err != nil {
		return err
	}
	var servers []Server
	for i, s := range p.MCPServers {
		if s.ID == "" {
			return fmt.Errorf("cortexr: profile mcp_servers[%d] has no id", i)
		}
		if j := slices.IndexFunc(defaults, func(d Server) bool { return d.Name == s.ID }); j >= 0 && s.Command == "" && s.URL == "" {
			d := defaults[j]
			if s.Description != "" {
				d.Description = s.Description
			}
			servers = append(servers, d)
			continue
		}
		if s.Command == "" && s.URL == "" {
			return fmt.Errorf("cortexr: profile mcp_servers[%d] (%s): give a command (stdio) or a url; only math, websearch and documents are built in", i, s.ID)
		}
		servers = append(servers, Server{Server: mcp.Server{Name: s.ID, Command: s.Command, Args: s.Args, Dir: s.Dir, URL: s.URL}, Description: s.Description})
	}
	cfg.Servers = servers
	return nil
}
