package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/fileaccess"
)

// propertyFlags is a repeatable --property key=value.
type propertyFlags map[string]string

func (p propertyFlags) String() string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (p propertyFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, not %q", s)
	}
	p[strings.TrimSpace(k)] = v
	return nil
}

// mm2OffsetsOptions are the flags of kmirror mm2-offsets.
type mm2OffsetsOptions struct {
	bootstrap   string
	topic       string
	sourceAlias string
	connector   string
	properties  propertyFlags
	timeout     time.Duration
	apply       string
	target      string // the kmirror connector to PATCH
}

// newMM2OffsetsCommand reads Java MM2's source offsets from Connect's offsets topic and prints (or applies)
// the PATCH /connectors/{name}/offsets body that makes kmirror's source connector resume where MM2 stopped.
func newMM2OffsetsCommand(stdout, stderr io.Writer) *ffcli.Command {
	fs := newFlagSet("kmirror mm2-offsets", stderr)
	o := mm2OffsetsOptions{properties: propertyFlags{}}
	fs.StringVar(&o.bootstrap, "bootstrap-servers", "", "the cluster holding Connect's offsets topic: the flow's target cluster for dedicated-mode MM2 (KMIRROR_BOOTSTRAP_SERVERS)")
	fs.StringVar(&o.sourceAlias, "source-alias", "", "MM2's alias of the source cluster: only its offsets are taken, and --topic defaults to mm2-offsets.<alias>.internal (KMIRROR_SOURCE_ALIAS)")
	fs.StringVar(&o.topic, "topic", "", "Connect's offsets topic; default mm2-offsets.<source-alias>.internal, required without --source-alias (on a Connect cluster: its offset.storage.topic) (KMIRROR_TOPIC)")
	fs.StringVar(&o.connector, "connector", mm2offsets.DefaultConnector, "the Java Connect connector whose offsets to take; dedicated-mode MM2 names it MirrorSourceConnector (KMIRROR_CONNECTOR)")
	fs.Var(o.properties, "property", "client setting for the consumer of the offsets topic, key=value, repeatable: Java client names (security.protocol, ssl.truststore.location, sasl.jaas.config, ...) mapped to librdkafka as in connector configs; librdkafka-only names pass through (KMIRROR_PROPERTY)")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "how long reading the topic, and applying the offsets, may take (KMIRROR_TIMEOUT)")
	fs.StringVar(&o.apply, "apply", "", "kmirror URL, e.g. http://kmirror:8083: PATCH the offsets into the connector there (which must exist and be STOPPED) and print the answer, instead of printing the body (KMIRROR_APPLY)")
	fs.StringVar(&o.target, "kmirror-connector", "", "with --apply: the kmirror connector to set; default the --connector name (KMIRROR_KMIRROR_CONNECTOR)")
	return &ffcli.Command{
		Name:       "mm2-offsets",
		ShortUsage: "kmirror mm2-offsets --bootstrap-servers HOST:PORT --source-alias A [--apply URL] [flags]",
		ShortHelp:  "hand over from Java MM2: read its source offsets and print or apply them as a PATCH .../offsets body",
		LongHelp: strings.TrimSpace(`
Reads Java MirrorMaker 2's source offsets from Kafka Connect's offsets topic (every partition, from the
beginning to the end it has when the command starts; last value per key wins, tombstones remove a key) and
prints the body of PATCH /connectors/{name}/offsets that sets them on kmirror's MirrorSourceConnector:

  {"offsets":[{"partition":{"cluster":"A","partition":0,"topic":"t1"},"offset":{"offset":41}}]}

kmirror resumes each partition at offset + 1, as MM2 does, so nothing is copied again and nothing is
skipped. Stop Java MM2 first: it commits its offsets when it stops cleanly. Then create the kmirror
connector with "initial_state":"STOPPED", apply the offsets (--apply, or curl -X PATCH with the printed
body), check GET /connectors/{name}/offsets and PUT /connectors/{name}/resume.
See docs/handover-from-mm2.md. A summary of what was read goes to stderr.`),
		FlagSet: fs,
		Options: []ff.Option{envOption},
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q (see kmirror mm2-offsets -h)", args[0])
			}
			return runMM2Offsets(ctx, o, stdout, stderr)
		},
	}
}

func runMM2Offsets(ctx context.Context, o mm2OffsetsOptions, stdout, stderr io.Writer) error {
	if o.bootstrap == "" {
		return errors.New("missing --bootstrap-servers: the cluster holding the offsets topic (the target cluster for dedicated-mode MM2)")
	}
	if o.topic == "" {
		if o.sourceAlias == "" {
			return errors.New("missing --topic or --source-alias: dedicated-mode MM2 keeps offsets in mm2-offsets.<source-alias>.internal")
		}
		o.topic = mm2offsets.Topic(o.sourceAlias)
	}
	if o.target == "" {
		o.target = o.connector
	}
	java := map[string]string{"client.id": "kmirror-mm2-offsets", "isolation.level": "read_committed"}
	for k, v := range o.properties {
		java[k] = v
	}
	java["bootstrap.servers"] = o.bootstrap
	// The files named here are the operator's own, on the command line of a command they run: any path may be
	// read (--allowed-file-dirs guards the REST API, where whoever writes a config is not the operator).
	anyFile, err := fileaccess.New("--property", []string{string(filepath.Separator)}, false)
	if err != nil {
		return err
	}
	// Likewise the token endpoint, if the operator gave one.
	var ownURL []string
	if u := strings.TrimSpace(java["sasl.oauthbearer.token.endpoint.url"]); u != "" {
		ownURL = []string{u}
	}
	cfg, err := clientconfig.Options{Files: anyFile, OAuthURLs: ownURL}.Translate(clientconfig.CheckpointsConsumer, java)
	if err != nil {
		return fmt.Errorf("invalid --property: %w", err)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	readCtx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	col := mm2offsets.NewCollector(o.connector, o.sourceAlias)
	read, err := kafka.ReadTopic(readCtx, cfg.Props, o.topic, log, func(r kafka.Record) error {
		col.Add(r.Key(), r.Value())
		return nil
	})
	if err != nil {
		if kafka.IsUnknownTopic(err) {
			return fmt.Errorf("no topic %s on %s: %w (is --bootstrap-servers the cluster MM2 wrote its offsets to?)", o.topic, o.bootstrap, err)
		}
		return err
	}
	offsets := col.Offsets()
	reportMM2Offsets(stderr, o, read, col.Stats(), offsets)
	if len(offsets) == 0 {
		return fmt.Errorf("no offsets of connector %s%s in %s: kmirror would copy everything again", o.connector, aliasNote(o.sourceAlias), o.topic)
	}
	if o.apply == "" {
		_, err := stdout.Write(mm2offsets.BodyLines(offsets))
		return err
	}
	applyCtx, cancelApply := context.WithTimeout(ctx, o.timeout)
	defer cancelApply()
	return applyMM2Offsets(applyCtx, o, offsets, stdout, stderr)
}

func aliasNote(alias string) string {
	if alias == "" {
		return ""
	}
	return " for source alias " + alias
}

func reportMM2Offsets(w io.Writer, o mm2OffsetsOptions, read kafka.TopicRead, s mm2offsets.Stats, offsets []mm2offsets.Offset) {
	fmt.Fprintf(w, "read %d records from %s (%d partitions) on %s\n", read.Records, o.topic, read.Partitions, o.bootstrap)
	fmt.Fprintf(w, "connector %s%s: %d source partition(s) with an offset (from %d records, %d of them tombstones)\n",
		o.connector, aliasNote(o.sourceAlias), len(offsets), s.Selected, s.Tombstones)
	if s.OtherConnectors > 0 {
		fmt.Fprintf(w, "skipped %d records of other connectors: %s\n", s.OtherConnectors, strings.Join(s.Connectors, ", "))
	}
	if s.OtherClusters > 0 {
		fmt.Fprintf(w, "skipped %d records of other source aliases than %s\n", s.OtherClusters, o.sourceAlias)
	}
	if s.Malformed > 0 {
		fmt.Fprintf(w, "warning: %d records are not MirrorSourceConnector offsets and were skipped:\n", s.Malformed)
		for _, e := range s.MalformedExamples {
			fmt.Fprintln(w, "  ", e)
		}
	}
	for _, off := range offsets {
		if off.NonCanonical {
			fmt.Fprintf(w, "warning: the offset of %s is stored under a key Java MM2 does not look up (not written by MM2?); using it\n", off.Source)
		}
	}
}

// applyMM2Offsets PATCHes the offsets into the kmirror connector, after checking that it replicates from the
// same source alias: kmirror ignores stored offsets of any other cluster, and would start over.
func applyMM2Offsets(ctx context.Context, o mm2OffsetsOptions, offsets []mm2offsets.Offset, stdout, stderr io.Writer) error {
	base := strings.TrimSuffix(o.apply, "/")
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("invalid --apply %q: want the kmirror URL, e.g. http://kmirror:8083", o.apply)
	}
	connURL := base + "/connectors/" + url.PathEscape(o.target)
	// What messages show: the URL may carry basic-auth credentials (https://user:password@host), which must
	// not end up in a terminal's scrollback or a CI log.
	shownBase := strings.TrimSuffix(u.Redacted(), "/")
	shown := shownBase + "/connectors/" + url.PathEscape(o.target)
	status, raw, err := httpDo(ctx, http.MethodGet, connURL+"/config", nil)
	if err != nil {
		return err
	}
	if status == http.StatusNotFound {
		return fmt.Errorf("kmirror at %s has no connector %s: create it first (POST /connectors with \"initial_state\":\"STOPPED\"), or name it with --kmirror-connector", shownBase, o.target)
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s/config: %d %s", shown, status, bytes.TrimSpace(raw))
	}
	var config map[string]string
	if err := json.Unmarshal(raw, &config); err != nil {
		return fmt.Errorf("GET %s/config: %w", shown, err)
	}
	if class := config[mirrorconfig.ConnectorClassConfig]; !strings.HasSuffix(class, "MirrorSourceConnector") {
		return fmt.Errorf("kmirror connector %s is a %s, not a MirrorSourceConnector", o.target, class)
	}
	alias := config[mirrorconfig.SourceClusterAliasConfig]
	for _, off := range offsets {
		if off.Source.Cluster != alias {
			return fmt.Errorf("kmirror connector %s replicates from source alias %q, but the offsets are for %q: kmirror would ignore them "+
				"(give it the alias MM2 used, or pick the offsets with --source-alias)", o.target, alias, off.Source.Cluster)
		}
	}
	status, raw, err = httpDo(ctx, http.MethodPatch, connURL+"/offsets", mm2offsets.Body(offsets))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", bytes.TrimSpace(raw))
	if status != http.StatusOK {
		return fmt.Errorf("PATCH %s/offsets: %d", shown, status)
	}
	fmt.Fprintf(stderr, "applied %d offsets to kmirror connector %s; check GET %s/offsets, then PUT %s/resume\n", len(offsets), o.target, shown, shown)
	return nil
}

func httpDo(ctx context.Context, method, u string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	return resp.StatusCode, raw, nil
}
