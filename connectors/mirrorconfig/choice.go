package mirrorconfig

import "strings"

// ParseChoice reads s as one of choices, case-insensitively and without surrounding spaces, as Connect's
// enum validators do; "" is def. ok is false for any other value: the caller's error names the setting.
func ParseChoice[T ~string](s string, def T, choices ...T) (v T, ok bool) {
	v = T(strings.ToLower(strings.TrimSpace(s)))
	if v == "" {
		return def, true
	}
	for _, c := range choices {
		if v == c {
			return v, true
		}
	}
	return "", false
}
