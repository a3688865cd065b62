package clientconfig

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Java's numeric config types; their bounds are the widest values Java accepts.
const (
	javaIntMax  = math.MaxInt32
	javaLongMax = math.MaxInt64
)

// CommaList splits a comma-separated value (a client setting of type LIST, a flag): trimmed, comma separated,
// blanks around commas ignored, empty elements dropped; nil when there are none.
func CommaList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// parseBool reads a Java BOOLEAN: true or false, in any case.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("invalid value %q: expected true or false", v)
}

// parseInteger reads a Java INT or LONG and checks it against Java's own
// bounds [min, max], which are wider than librdkafka's: clamping to
// librdkafka's range is the caller's decision.
func parseInteger(v string, min, max int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid value %q: not an integer", v)
	}
	if n < min {
		return 0, fmt.Errorf("invalid value %d: must be at least %d", n, min)
	}
	if n > max {
		return 0, fmt.Errorf("invalid value %d: must be at most %d", n, max)
	}
	return n, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
