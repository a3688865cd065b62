package server

import (
	"runtime/debug"
	"sync"

	"github.com/kmirror/kmirror/api"
)

// ConnectVersion is the Kafka Connect REST API level kmirror speaks, reported as "version" by GET / because
// clients (kcctl) gate features on it and parse it as a Kafka version.
const ConnectVersion = api.ConnectVersion

// Version is kmirror's own release; set with -ldflags "-X github.com/kmirror/kmirror/server.Version=...".
var Version = "0.1.0-dev"

// commit may be set with -ldflags "-X github.com/kmirror/kmirror/server.commit=<sha>" where the build has no VCS
// information (a container build without .git, or GOFLAGS=-buildvcs=false).
var commit string

// Commit returns the VCS revision the binary was built from (16 hex digits, like Connect's commit id), or
// "unknown".
var Commit = sync.OnceValue(func() string {
	if len(commit) >= 16 {
		return commit[:16]
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 16 {
			return s.Value[:16]
		}
	}
	return "unknown"
})
