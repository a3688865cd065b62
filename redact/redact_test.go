package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValuesHideEveryRememberedValue(t *testing.T) {
	var v Values
	require.Equal(t, "plain", v.String("plain"), "an empty set hides nothing")
	v.Add("s3cr3t-host:9092", "s3cr3t", "ssl") // "ssl" is too short to hide
	require.Equal(t, "connect to [hidden] failed; [hidden] again; ssl stays",
		v.String("connect to s3cr3t-host:9092 failed; s3cr3t again; ssl stays"))
	var none *Values
	require.Equal(t, "s3cr3t", none.String("s3cr3t"))
}

func TestHandlerHidesMessagesAndAttributes(t *testing.T) {
	var v Values
	var buf bytes.Buffer
	log := slog.New(v.Handler(slog.NewTextHandler(&buf, nil))).With("bound", "early-marker-x")
	v.Add("marker-x")
	log.Info("lost marker-x", "s", "at marker-x", "err", errors.New("dial marker-x"), slog.Group("g", "in", "marker-x"), "n", 3)
	out := buf.String()
	require.Contains(t, out, "bound=early-marker-x", "attributes bound before the value was known keep it (documented)")
	require.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("marker-x")))
	require.Contains(t, out, `msg="lost [hidden]"`)
	require.Contains(t, out, `err="dial [hidden]"`)
	require.Contains(t, out, "g.in=[hidden]")
	require.Contains(t, out, "n=3")
}
