package mirrorconfig

import (
	"errors"
	"strconv"
	"strings"
)

// A versionRange is the subset of Maven's VersionRange that Connect 4.1's plugin version keys
// (KIP-891) use: a bare version is a hard requirement, "[a,b)" style restrictions may be
// combined with commas, "latest" or null means no requirement.
type versionRange struct {
	restrictions []restriction
}

type restriction struct {
	lower, upper                   string
	lowerInclusive, upperInclusive bool
}

// versionRequirement mirrors PluginUtils.connectorVersionRequirement. It returns nil when no
// version is required. Error texts are Maven's InvalidVersionSpecificationException messages.
func versionRequirement(spec *string) (*versionRange, error) {
	if spec == nil || *spec == "latest" {
		return nil, nil
	}
	s := strings.TrimSpace(*spec)
	r, soft, err := parseVersionSpec(s)
	if err != nil {
		return nil, err
	}
	if soft {
		// Connect turns a recommended version into an exact requirement.
		r, _, err = parseVersionSpec("[" + s + "]")
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

// parseVersionSpec follows VersionRange.createFromVersionSpec; soft reports a bare version.
func parseVersionSpec(spec string) (r *versionRange, soft bool, err error) {
	r = &versionRange{}
	process := spec
	for strings.HasPrefix(process, "[") || strings.HasPrefix(process, "(") {
		end := strings.IndexAny(process, ")]")
		if end < 0 {
			return nil, false, errors.New("Unbounded range: " + spec)
		}
		res, err := parseRestriction(process[:end+1])
		if err != nil {
			return nil, false, err
		}
		if n := len(r.restrictions); n > 0 {
			prev := r.restrictions[n-1]
			if prev.upper == "" || (res.lower != "" && compareVersions(res.lower, prev.upper) < 0) {
				return nil, false, errors.New("Ranges overlap: " + spec)
			}
		}
		r.restrictions = append(r.restrictions, res)
		process = strings.TrimSpace(process[end+1:])
		if strings.HasPrefix(process, ",") {
			process = strings.TrimSpace(process[1:])
		}
	}
	if process != "" {
		if len(r.restrictions) > 0 {
			return nil, false, errors.New("Only fully-qualified sets allowed in multiple set scenario: " + spec)
		}
		return r, true, nil
	}
	return r, false, nil
}

func parseRestriction(spec string) (restriction, error) {
	res := restriction{
		lowerInclusive: strings.HasPrefix(spec, "["),
		upperInclusive: strings.HasSuffix(spec, "]"),
	}
	body := strings.TrimSpace(spec[1 : len(spec)-1])
	lower, upper, isRange := strings.Cut(body, ",")
	if !isRange {
		if !res.lowerInclusive || !res.upperInclusive {
			return restriction{}, errors.New("Single version must be surrounded by []: " + spec)
		}
		res.lower, res.upper = body, body
		return res, nil
	}
	res.lower, res.upper = strings.TrimSpace(lower), strings.TrimSpace(upper)
	if strings.Contains(res.upper, ",") {
		return restriction{}, errors.New("Invalid version range " + spec + ", bounds may not contain additional ','")
	}
	if res.lower != "" && res.upper != "" && compareVersions(res.upper, res.lower) < 0 {
		return restriction{}, errors.New("Range defies version ordering: " + spec)
	}
	return res, nil
}

// contains reports whether version satisfies one of the restrictions.
func (r *versionRange) contains(version string) bool {
	for _, res := range r.restrictions {
		if res.lower != "" {
			c := compareVersions(version, res.lower)
			if c < 0 || (c == 0 && !res.lowerInclusive) {
				continue
			}
		}
		if res.upper != "" {
			c := compareVersions(version, res.upper)
			if c > 0 || (c == 0 && !res.upperInclusive) {
				continue
			}
		}
		return true
	}
	return false
}

// String renders the range as Maven's VersionRange.toString, e.g. "[4.0.0,4.0.0]".
func (r *versionRange) String() string {
	parts := make([]string, len(r.restrictions))
	for i, res := range r.restrictions {
		var b strings.Builder
		if res.lowerInclusive {
			b.WriteByte('[')
		} else {
			b.WriteByte('(')
		}
		b.WriteString(res.lower + "," + res.upper)
		if res.upperInclusive {
			b.WriteByte(']')
		} else {
			b.WriteByte(')')
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, ",")
}

// compareVersions orders dotted versions numerically segment by segment ("4.1" == "4.1.0");
// a qualifier ("4.1.1-SNAPSHOT") sorts before the release, as in Maven.
func compareVersions(a, b string) int {
	an, aq, _ := strings.Cut(a, "-")
	bn, bq, _ := strings.Cut(b, "-")
	as, bs := strings.Split(an, "."), strings.Split(bn, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		x, y := segment(as, i), segment(bs, i)
		xi, xerr := strconv.Atoi(x)
		yi, yerr := strconv.Atoi(y)
		switch {
		case xerr == nil && yerr == nil:
			if xi != yi {
				return cmpInt(xi, yi)
			}
		case x != y:
			return strings.Compare(x, y)
		}
	}
	switch {
	case aq == bq:
		return 0
	case aq == "":
		return 1
	case bq == "":
		return -1
	}
	return strings.Compare(aq, bq)
}

func segment(s []string, i int) string {
	if i < len(s) && s[i] != "" {
		return s[i]
	}
	return "0"
}

func cmpInt(a, b int) int {
	if a < b {
		return -1
	}
	return 1
}
