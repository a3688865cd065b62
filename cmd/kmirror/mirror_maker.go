package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/kmirror/kmirror/connectors/configdef"
	"github.com/kmirror/kmirror/connectors/mm2file"
	"github.com/kmirror/kmirror/server"
)

// mm2Flags are the flags that name an mm2.properties and the targets to declare its flows for.
type mm2Flags struct {
	path     *string
	clusters *string
}

func registerMM2Flags(fs *flag.FlagSet) mm2Flags {
	return mm2Flags{
		path: fs.String("mm2-properties", "", "a MirrorMaker 2 dedicated-mode file (connect-mirror-maker.sh's mm2.properties): its connectors "+
			"are declared at start, converging what an earlier start declared (see docs/mirror-maker.md) (KMIRROR_MM2_PROPERTIES)"),
		clusters: fs.String("clusters", "", "with --mm2-properties: declare only the flows whose target cluster is listed, comma-separated, "+
			"as MM2's --clusters; default every cluster (KMIRROR_CLUSTERS)"),
	}
}

// load reads the file (path, else --mm2-properties); nil when neither names one.
func (m mm2Flags) load(path string) (*server.MM2Properties, error) {
	if path == "" {
		path = *m.path
	}
	if path == "" {
		if *m.clusters != "" {
			return nil, errors.New("--clusters needs an mm2.properties (--mm2-properties)")
		}
		return nil, nil
	}
	f, err := mm2file.Load(path)
	if err != nil {
		return nil, err
	}
	var clusters []string
	if strings.TrimSpace(*m.clusters) != "" {
		clusters = configdef.SplitList(*m.clusters)
	}
	// Reading the connectors now reports a file without flows before anything starts.
	if _, err := f.Connectors(clusters); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &server.MM2Properties{File: f, Clusters: clusters}, nil
}

// newMirrorMakerCommand is connect-mirror-maker.sh's shape: kmirror mirror-maker mm2.properties [--clusters B C]
// serves a worker declaring the file's connectors; --print shows them instead.
func newMirrorMakerCommand(stdout, stderr io.Writer) *ffcli.Command {
	fs := newFlagSet("kmirror mirror-maker", stderr)
	serve := registerServeFlags(fs, stderr)
	mm2 := registerMM2Flags(fs)
	print := fs.Bool("print", false, "print the connectors the file declares and exit, without a database")
	format := fs.String("format", "json", "with --print: json (one POST /connectors body per connector) or hcl (kafka-connect_connector "+
		"resources of the Kafka Connect Terraform provider)")
	strimzi := fs.Bool("strimzi", false, "with --print: the file is a Strimzi KafkaMirrorMaker2 resource (kafka.strimzi.io/v1beta2 or v1), "+
		"converted to the connectors Strimzi creates; its Secrets become references of the directory config provider")
	secretsDir := fs.String("strimzi-secrets-dir", mm2file.DefaultSecretsDir, "with --strimzi: where the resource's Secrets are mounted, one "+
		"directory per Secret")
	return envCommand(fs, "mirror-maker", "kmirror mirror-maker [flags] mm2.properties [--clusters B C]",
		"run a worker for a MirrorMaker 2 dedicated-mode file, as connect-mirror-maker.sh does; --print shows its connectors", func(ctx context.Context, args []string) error {
			path, err := mirrorMakerArgs(fs, args)
			if err != nil {
				return err
			}
			var cs []mm2file.Connector
			switch {
			case *strimzi && !*print:
				return errors.New("--strimzi converts a resource for --print; serve its connectors through the REST API or Terraform")
			case *strimzi:
				if path == "" {
					return errors.New("missing the KafkaMirrorMaker2 resource: kmirror mirror-maker --print --strimzi resource.yaml")
				}
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				var warnings []string
				if cs, warnings, err = mm2file.FromStrimzi(data, *secretsDir); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				for _, w := range warnings {
					fmt.Fprintln(stderr, "warning:", w)
				}
			default:
				m, err := mm2.load(path)
				if err != nil {
					return err
				}
				if m == nil {
					return errors.New("missing mm2.properties: kmirror mirror-maker mm2.properties [--clusters B C]")
				}
				if !*print {
					return serve(ctx, m)
				}
				if cs, err = m.File.Connectors(m.Clusters); err != nil {
					return err
				}
			}
			switch *format {
			case "json":
				return mm2file.WriteJSON(stdout, cs)
			case "hcl":
				return mm2file.WriteHCL(stdout, cs)
			}
			return fmt.Errorf("invalid --format %q: use json or hcl", *format)
		})
}

// mirrorMakerArgs takes the file and what follows it: connect-mirror-maker.sh puts flags after the file and
// lists --clusters values separated by spaces, which Go's flag parsing stops at.
func mirrorMakerArgs(fs *flag.FlagSet, args []string) (string, error) {
	if len(args) == 0 {
		return "", nil
	}
	path, rest := args[0], args[1:]
	var flags []string
	for i := 0; i < len(rest); i++ {
		if rest[i] != "--clusters" && rest[i] != "-clusters" {
			flags = append(flags, rest[i])
			continue
		}
		var values []string
		for i+1 < len(rest) && !strings.HasPrefix(rest[i+1], "-") {
			i++
			values = append(values, rest[i])
		}
		flags = append(flags, "--clusters="+strings.Join(values, ","))
	}
	if err := fs.Parse(flags); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("unexpected argument %q after the mm2.properties", fs.Arg(0))
	}
	return path, nil
}
