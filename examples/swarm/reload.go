package swarm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"reflect"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/mcp"
)

// MaxServersFile bounds the size of Config.ServersFile.
const MaxServersFile = 1 << 20

// loadServers reads an mcpServers file and returns its servers and a
// version (a hash of its content) that tells a change.
func loadServers(path string) ([]mcp.Server, string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("swarm: servers file: %w", err)
	}
	if info.Size() > MaxServersFile {
		return nil, "", fmt.Errorf("swarm: servers file %s is %d bytes; the limit is %d", path, info.Size(), MaxServersFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("swarm: servers file: %w", err)
	}
	servers, err := mcp.LoadConfig(path)
	if err != nil {
		return nil, "", fmt.Errorf("swarm: servers file %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	return servers, hex.EncodeToString(sum[:]), nil
}

// ReloadReport says what a reload changed.
type ReloadReport struct {
	// Added, Removed and Changed name the servers (not the agents).
	Added, Removed, Changed []string
}

// Reload reads Config.ServersFile again (the seed's registry.reload()):
// servers it adds become agents of the runs that start from now on; servers
// it removes are no longer offered to new runs, and are shut down when the
// runs already using them have finished; a server whose configuration
// changed is restarted, so a task using it at that moment may see one
// failed call. A file that cannot be read or parsed changes nothing.
func (w *Swarm) Reload(ctx context.Context) (ReloadReport, error) {
	var rep ReloadReport
	if w.cfg.ServersFile == "" {
		return rep, errors.New("swarm: Reload: Config.ServersFile is not set")
	}
	servers, version, err := loadServers(w.cfg.ServersFile)
	if err != nil {
		return rep, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return rep, ErrClosed
	}
	next := map[string]mcp.Server{}
	var order []string
	for _, s := range servers {
		if _, dup := next[s.Name]; dup {
			continue
		}
		for _, c := range w.code {
			if c.Name == s.Name {
				return rep, fmt.Errorf("swarm: server %q of %s is also in Config.Servers; rename one", s.Name, w.cfg.ServersFile)
			}
		}
		next[s.Name] = s
		order = append(order, s.Name)
	}
	for _, name := range w.fileOrder {
		old := w.file[name]
		s, ok := next[name]
		switch {
		case !ok:
			rep.Removed = append(rep.Removed, name)
		case !reflect.DeepEqual(old, s):
			rep.Changed = append(rep.Changed, name)
			_ = w.manager.Remove(name)
			if err := w.manager.Add(s); err != nil {
				return rep, fmt.Errorf("swarm: reloading server %q: %w", name, err)
			}
		}
	}
	for _, name := range order {
		if _, ok := w.file[name]; ok {
			continue
		}
		if err := w.manager.Add(next[name]); err != nil {
			// Still in use by a run of an older generation under the same
			// name: replace it.
			_ = w.manager.Remove(name)
			if err := w.manager.Add(next[name]); err != nil {
				return rep, fmt.Errorf("swarm: adding server %q: %w", name, err)
			}
		}
		rep.Added = append(rep.Added, name)
	}
	w.file, w.fileOrder, w.fileVersion = next, order, version
	if err := w.swap(); err != nil {
		return rep, err
	}
	if err := w.registry.Refresh(ctx); err != nil {
		w.log.Warn("swarm: refreshing tools after reload", zap.Error(err))
	}
	w.log.Info("swarm: reloaded servers", zap.Strings("added", rep.Added), zap.Strings("removed", rep.Removed),
		zap.Strings("changed", rep.Changed))
	return rep, nil
}

// Watch reloads Config.ServersFile whenever its content changes, checking
// every interval (zero means 2s), until ctx ends. A change that cannot be
// loaded is logged and tried again at the next change.
func (w *Swarm) Watch(ctx context.Context, interval time.Duration) error {
	if w.cfg.ServersFile == "" {
		return errors.New("swarm: Watch: Config.ServersFile is not set")
	}
	if interval <= 0 {
		interval = 2 * time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	tried := ""
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		data, err := os.ReadFile(w.cfg.ServersFile)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(data)
		version := hex.EncodeToString(sum[:])
		w.mu.Lock()
		same := version == w.fileVersion
		w.mu.Unlock()
		if same || version == tried {
			continue
		}
		tried = version
		if _, err := w.Reload(ctx); err != nil {
			if errors.Is(err, ErrClosed) {
				return err
			}
			w.log.Warn("swarm: reloading the servers file", zap.Error(err))
		}
	}
}
