package clientconfig

import (
	"errors"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/fileaccess"
)

// translateCase is one row of a translation table: the Java properties (on
// top of a bootstrap.servers) and what must come out.
type translateCase struct {
	name string
	role Role
	in   map[string]string
	// want are librdkafka properties that must be set to these values.
	want map[string]string
	// absent are librdkafka properties that must not be set.
	absent []string
	// dropped are keys that must be listed in Config.Dropped.
	dropped []string
	// errKey and errMsg, when set, expect exactly one error, on errKey, whose
	// message contains errMsg.
	errKey, errMsg string
	// warn, when set, expects a warning on this key.
	warn string
}

func runTranslateCases(t *testing.T, cases []translateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]string{"bootstrap.servers": "broker:9092"}
			maps.Copy(in, tc.in)
			cfg, errs := translate(testOptions(t), tc.role, in)
			if tc.errKey != "" {
				require.Len(t, errs, 1, "errors: %v", errs)
				require.Equal(t, tc.errKey, errs[0].Key)
				require.Contains(t, errs[0].Msg, tc.errMsg)
				return
			}
			require.Empty(t, errs)
			for k, v := range tc.want {
				require.Contains(t, cfg.Props, k)
				require.Equal(t, v, cfg.Props[k], "property %s", k)
			}
			for _, k := range tc.absent {
				require.NotContains(t, cfg.Props, k)
			}
			for _, k := range tc.dropped {
				require.Contains(t, cfg.Dropped, k)
			}
			if tc.warn != "" {
				require.True(t, hasWarning(cfg, tc.warn), "no warning on %s in %v", tc.warn, cfg.Warnings)
			}
		})
	}
}

func hasWarning(cfg Config, key string) bool {
	for _, w := range cfg.Warnings {
		if len(w) > len(key) && w[:len(key)+1] == key+":" {
			return true
		}
	}
	return false
}

// mustTranslate translates and fails the test on any error.
func mustTranslate(t *testing.T, role Role, in map[string]string) Config {
	t.Helper()
	cfg, err := testOptions(t).Translate(role, in)
	require.NoError(t, err)
	return cfg
}

// testOptions allow the files of testdata/, which the tests name as relative paths.
func testOptions(t *testing.T) Options {
	return Options{Files: allowDirs(t, "testdata"), OAuthURLs: testOAuthURLs}
}

// testOAuthURLs are the token endpoints the tests' OIDC configs name.
var testOAuthURLs = []string{"https://idp/token", "https://idp.example/token"}

func allowDirs(t *testing.T, dirs ...string) fileaccess.Allowlist {
	t.Helper()
	a, err := fileaccess.New("--allowed-file-dirs", dirs, false)
	require.NoError(t, err)
	return a
}

// keyErrors unpacks the joined error Translate returns.
func keyErrors(t *testing.T, err error) []*KeyError {
	t.Helper()
	require.Error(t, err)
	var out []*KeyError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ke *KeyError
		require.True(t, errors.As(e, &ke))
		out = append(out, ke)
	}
	return out
}
