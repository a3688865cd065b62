package configprovider

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/fileaccess"
)

type fixture struct {
	dir, outside string
	p            *Providers
}

func newFixture(t *testing.T, env map[string]string, envAllowlist string) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{dir: filepath.Join(root, "secrets"), outside: filepath.Join(root, "outside")}
	require.NoError(t, os.MkdirAll(filepath.Join(f.dir, "kafka"), 0o700))
	require.NoError(t, os.MkdirAll(f.outside, 0o700))
	write := func(path, content string) { require.NoError(t, os.WriteFile(path, []byte(content), 0o600)) }
	write(filepath.Join(f.dir, "client.properties"), "# a comment\nusername = alice\npassword=s3cr:et\\\n  -continued\nempty=\n")
	write(filepath.Join(f.dir, "kafka", "password"), "from-a-file\n")
	write(filepath.Join(f.outside, "client.properties"), "password=outside\n")
	write(filepath.Join(f.outside, "password"), "outside\n")
	require.NoError(t, os.Symlink(f.outside, filepath.Join(f.dir, "escape")))
	allowed, err := fileaccess.New("--config-provider-allowed-paths", []string{f.dir}, false)
	require.NoError(t, err)
	f.p, err = New(Config{Enabled: Names, AllowedPaths: allowed, EnvAllowlist: envAllowlist,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	require.NoError(t, err)
	return f
}

func TestReferences(t *testing.T) {
	require.Equal(t, []Reference{
		{Text: "${env:USER}", Provider: "env", Key: "USER"},
		{Text: "${file:/etc/a.properties:k:with:colons}", Provider: "file", Path: "/etc/a.properties", Key: "k:with:colons"},
		{Text: "${directory:/run/secrets:password}", Provider: "directory", Path: "/run/secrets", Key: "password"},
	}, References(`u=${env:USER} ${file:/etc/a.properties:k:with:colons} ${directory:/run/secrets:password}`))
	for _, literal := range []string{"plain", "${}", "${env}", "$env:X}", "{env:X}"} {
		require.False(t, HasReference(literal), literal)
	}
	require.True(t, HasReference("prefix-${env:X}-suffix"))
}

func TestResolve(t *testing.T) {
	f := newFixture(t, map[string]string{"KAFKA_PASSWORD": "env-secret", "KMIRROR_DATABASE_URL": "postgres://u:p@db/k"}, "")
	r := f.p.Begin()
	for ref, want := range map[string]string{
		"${env:KAFKA_PASSWORD}":                                    "env-secret",
		"${file:" + f.dir + "/client.properties:username}":         "alice",
		"${file:" + f.dir + "/client.properties:password}":         "s3cr:et-continued",
		"${file:" + f.dir + "/client.properties:empty}":            "",
		"${directory:" + f.dir + "/kafka:password}":                "from-a-file\n",
		"user=${file:" + f.dir + "/client.properties:username};pw": "user=alice;pw",
		"no reference": "no reference",
	} {
		got, err := r.Resolve(ref)
		require.NoError(t, err, ref)
		require.Equal(t, want, got, ref)
	}

	for ref, msg := range map[string]string{
		"${env:MISSING}":              "environment variable MISSING is not set",
		"${env:KMIRROR_DATABASE_URL}": "the env config provider may not read KMIRROR_DATABASE_URL",
		"${env:/x:Y}":                 "Path is not supported for EnvVarConfigProvider, invalid value '/x'",
		"${file:" + f.dir + "/client.properties:nope}":          "no key nope in " + f.dir + "/client.properties (file config provider)",
		"${file:" + f.dir + "/missing.properties:k}":            "the file config provider cannot read the properties file",
		"${file:relative.properties:k}":                         "the path must be absolute",
		"${directory:" + f.dir + "/kafka:nope}":                 "no file nope in " + f.dir + "/kafka (directory config provider)",
		"${directory:" + f.dir + ":kafka}":                      "no file kafka in", // a directory is not a value
		"${directory:" + f.dir + "/kafka:../client.properties}": "the key must be the name of a file directly in the directory",
		"${vault:/secret:x}":                                    `unknown config provider "vault"`,
	} {
		_, err := r.Resolve(ref)
		require.ErrorContains(t, err, msg, ref)
		require.ErrorContains(t, err, ref, "the error names the reference")
	}

	// Outside the allowed paths, by name, by "..", or through a link: one text, nothing read.
	var texts []string
	for _, path := range []string{f.outside, f.dir + "/../outside", f.dir + "/escape"} {
		for _, ref := range []string{"${file:" + path + "/client.properties:password}", "${directory:" + path + ":password}"} {
			_, err := r.Resolve(ref)
			require.Error(t, err, ref)
			require.NotContains(t, err.Error(), "outside\n")
			require.Contains(t, err.Error(), "outside the directories config providers may read (--config-provider-allowed-paths: "+f.p.paths.Dirs()[0]+")", ref)
			texts = append(texts, err.Error()[len(ref):])
		}
	}
	for _, txt := range texts {
		require.Equal(t, texts[0], txt)
	}
}

func TestResolveReadsAFileOncePerResolution(t *testing.T) {
	f := newFixture(t, nil, "")
	ref := "${file:" + f.dir + "/client.properties:username}"
	r := f.p.Begin()
	v, err := r.Resolve(ref)
	require.NoError(t, err)
	require.Equal(t, "alice", v)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "client.properties"), []byte("username=bob\n"), 0o600))
	v, _ = r.Resolve(ref)
	require.Equal(t, "alice", v, "one client's settings come from one reading of the file")
	v, _ = f.p.Begin().Resolve(ref)
	require.Equal(t, "bob", v, "the next client (a restarted task) reads the file again")
}

func TestEnvAllowlist(t *testing.T) {
	f := newFixture(t, map[string]string{"KAFKA_PASSWORD": "a", "HOME_SECRET": "b"}, "^KAFKA_")
	r := f.p.Begin()
	v, err := r.Resolve("${env:KAFKA_PASSWORD}")
	require.NoError(t, err)
	require.Equal(t, "a", v)
	_, err = r.Resolve("${env:HOME_SECRET}")
	require.ErrorContains(t, err, "the env config provider may not read HOME_SECRET (--config-provider-env-allowlist; KMIRROR_* never)")
	require.ErrorContains(t, f.p.Check("${env:HOME_SECRET}"), "may not read HOME_SECRET", "validation refuses it: the name alone decides")
}

func TestCheck(t *testing.T) {
	f := newFixture(t, nil, "")
	require.NoError(t, f.p.Check("${env:ANYTHING}"), "Check reads nothing: a missing variable is found at task start")
	require.NoError(t, f.p.Check("${file:"+f.dir+"/not-there.properties:k}"))
	require.ErrorContains(t, f.p.Check("${file:/etc/passwd:root}"), "outside the directories config providers may read")

	none, err := New(Config{Enabled: []string{Env}})
	require.NoError(t, err)
	require.ErrorContains(t, none.Check("${file:/x:y}"), "the file config provider is not enabled on this worker (--config-providers: env only)")
	var nothing *Providers
	require.ErrorContains(t, nothing.Check("${env:X}"), "the env config provider is not enabled on this worker (--config-providers: none is)")
	require.NoError(t, nothing.Check("no references"))
}

func TestNew(t *testing.T) {
	_, err := New(Config{Enabled: []string{"file"}})
	require.ErrorContains(t, err, "need --config-provider-allowed-paths")
	_, err = New(Config{Enabled: []string{"vault"}})
	require.ErrorContains(t, err, `unknown provider "vault"`)
	_, err = New(Config{Enabled: []string{"env"}, EnvAllowlist: "("})
	require.ErrorContains(t, err, "--config-provider-env-allowlist")
}

func TestParseProperties(t *testing.T) {
	got, err := parseProperties([]byte("a=1\n  b : 2\nc 3\n! bang\n#hash\nd=x\\\n    y\ne=\\u00e9\\t\\=\nf\\ g=h\nsasl.jaas.config=org.Foo required user=\"u\" password=\"p\";\na=last\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"a": "last", "b": "2", "c": "3", "d": "xy", "e": "é\t=", "f g": "h",
		"sasl.jaas.config": `org.Foo required user="u" password="p";`,
	}, got)
	_, err = parseProperties([]byte("a=\\u12"))
	require.ErrorContains(t, err, "malformed \\uxxxx encoding")
}
