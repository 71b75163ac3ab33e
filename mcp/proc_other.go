//go:build !unix

package mcp

import "os/exec"

// startGroup does nothing where process groups are not available.
func startGroup(*exec.Cmd) {}

// killGroup kills the server process. Children it started are not reached
// on this platform.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// groupAlive reports false: there is no process group to wait for on this
// platform.
func groupAlive(*exec.Cmd) bool { return false }
