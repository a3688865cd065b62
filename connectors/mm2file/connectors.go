package mm2file

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// connectorClasses are the three connectors MM2 runs in every herder, in MirrorMaker.startConnectors order.
var connectorClasses = []string{
	mirrorconfig.SourceConnectorClass,
	mirrorconfig.CheckpointConnectorClass,
	mirrorconfig.HeartbeatConnectorClass,
}

// Connector is one connector the file declares.
type Connector struct {
	// Name is kmirror's name, "<source>-><target>.<SimpleClassName>"; Config["name"] is the same.
	Name  string
	Flow  Flow
	Class string
	// MM2Name is the name MM2 gives it inside its herder (the simple class name): the namespace of its offsets
	// in MM2's mm2-offsets.<source>.internal topic.
	MM2Name string
	Config  map[string]string
	from    map[string]string
}

// Name is kmirror's name of the connector of class in flow fl.
func Name(fl Flow, class string) string { return fl.String() + "." + simpleName(class) }

// Connectors are the connectors to declare when serving --clusters targets (all when empty), sorted by name:
// all three of every enabled flow, the heartbeat connector alone of a herder whose flow is not enabled.
func (f *File) Connectors(targets []string) ([]Connector, error) {
	herders, err := f.Herders(targets)
	if err != nil {
		return nil, err
	}
	var out []Connector
	for _, fl := range herders {
		for _, class := range connectorClasses {
			if class != mirrorconfig.HeartbeatConnectorClass && !f.FlowEnabled(fl) {
				continue
			}
			settings := f.baseSettings(fl, class)
			c := Connector{Name: Name(fl, class), Flow: fl, Class: class, Config: map[string]string{}, from: map[string]string{}}
			for k, s := range settings {
				c.Config[k] = s.value
				if s.from != "" {
					c.from[k] = s.from
				}
			}
			c.MM2Name = c.Config[keyName]
			c.Config[keyName] = c.Name
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Connector) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// Enabled says whether the connector's flow replicates (its enabled key, parsed as Connect parses a BOOLEAN).
func (c Connector) Enabled() bool { return parseBoolean(strings.TrimSpace(c.Config[keyEnabled])) }

// Source is the file key a config key of the connector came from, "" for a value MM2 fills in.
func (c Connector) Source(key string) string { return c.from[key] }

// Validate checks every connector as POST /connectors would (validate returns the message of Connect's 400,
// "" when valid) and splits them. Each problem names the connector and the file lines of the keys its message
// names. MM2 does the same split: its herder validates each config it is given and a connector whose config
// is refused is not created (MM2 logs the error and runs the others), e.g. a MirrorCheckpointConnector with
// emit.checkpoints.enabled=false.
func (f *File) Validate(cs []Connector, validate func(Connector) string) (valid []Connector, problems []error) {
	for _, c := range cs {
		msg := validate(c)
		if msg == "" {
			valid = append(valid, c)
			continue
		}
		var lines []string
		for _, k := range slices.Sorted(maps.Keys(c.from)) {
			if strings.Contains(msg, "configuration "+k) || strings.Contains(msg, "\""+k+"\"") || strings.Contains(msg, k+" ") ||
				strings.HasSuffix(msg, k) {
				src := c.from[k]
				lines = append(lines, fmt.Sprintf("%s is line %d (%s)", k, f.lines[src], src))
			}
		}
		p := c.Name + ": " + msg
		if len(lines) > 0 {
			p += "\n(" + strings.Join(lines, "; ") + ")"
		}
		problems = append(problems, &InvalidError{Name: c.Name, Path: f.Path, Message: p})
	}
	return valid, problems
}

// InvalidError is a connector of the file whose config validation refuses.
type InvalidError struct {
	Name, Path, Message string
}

func (e *InvalidError) Error() string { return e.Path + ": " + e.Message }
