package main

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPprofListenerServesProfilesUntilStopped: --pprof-listen serves net/http/pprof on its own address, and
// stopping it closes the listener.
func TestPprofListenerServesProfilesUntilStopped(t *testing.T) {
	addr, stop, err := servePprof(t.Context(), "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + addr.String() + "/debug/pprof/cmdline"
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "kmirror", "the command line of this test binary")

	stop()
	_, err = http.Get(url)
	require.Error(t, err, "the listener is closed")

	_, _, err = servePprof(t.Context(), "256.0.0.1:1")
	require.ErrorContains(t, err, "listen for pprof on 256.0.0.1:1")
}
