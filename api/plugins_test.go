package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

const mirrorPlugins = `[{"class":"org.apache.kafka.connect.mirror.MirrorCheckpointConnector","type":"source","version":"4.1.1"},` +
	`{"class":"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector","type":"source","version":"4.1.1"},` +
	`{"class":"org.apache.kafka.connect.mirror.MirrorSourceConnector","type":"source","version":"4.1.1"}]`

// allPlugins is the list with connectorsOnly=false: Connect 4.1.1's order (connectors, transformations,
// predicates, converters, header converters) holding what kmirror accepts, ByteArrayConverter in both converter
// roles. Connect also lists its SMTs, predicates and other converters, which kmirror rejects.
var allPlugins = mirrorPlugins[:len(mirrorPlugins)-1] +
	`,{"class":"org.apache.kafka.connect.converters.ByteArrayConverter","type":"converter","version":"4.1.1"}` +
	`,{"class":"org.apache.kafka.connect.converters.ByteArrayConverter","type":"header_converter","version":"4.1.1"}]`

func TestListPlugins(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, query := range []string{"", "?connectorsOnly=true", "?connectorsOnly=TRUE", "?connectorsOnly=", "?connectorsOnly=%20"} {
		requireJSON(t, f.do("GET", "/connector-plugins"+query, ""), http.StatusOK, mirrorPlugins)
	}
	// Jersey reads the parameter with Boolean.valueOf: anything but "true" (any case) is false, so Connect 4.1.1
	// lists every plugin type for connectorsOnly=null or =garbage as for =false.
	for _, query := range []string{"?connectorsOnly=false", "?connectorsOnly=FALSE", "?connectorsOnly=null", "?connectorsOnly=garbage"} {
		requireJSON(t, f.do("GET", "/connector-plugins"+query, ""), http.StatusOK, allPlugins)
	}
}

// TestConverterPluginConfig: the converter kmirror lists answers its config definition as Connect 4.1.1 does,
// under its class name and aliases, but is no connector class.
func TestConverterPluginConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const want = `[{"name":"converter.type","type":"STRING","required":true,"default_value":null,"importance":"LOW",` +
		`"documentation":"How this converter will be used.","group":null,"width":"NONE","display_name":"converter.type","dependents":[],"order":-1}]`
	for _, name := range []string{"ByteArray", "ByteArrayConverter", "org.apache.kafka.connect.converters.ByteArrayConverter"} {
		requireJSON(t, f.do("GET", "/connector-plugins/"+name+"/config", ""), http.StatusOK, want)
	}
	requireError(t, f.do("GET", "/connector-plugins/StringConverter/config", ""), http.StatusNotFound, "Unknown plugin StringConverter.")
	r := f.do("POST", "/connectors", `{"name":"c","config":{"connector.class":"ByteArrayConverter"}}`)
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Contains(t, r.body, "Failed to find any class that implements Connector and which name matches ByteArrayConverter")
	requireError(t, f.do("GET", "/connectors/c", ""), http.StatusNotFound, "Connector c not found")
}

// configKey is ConfigKeyInfo as clients read it.
type configKey struct {
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	Required     bool     `json:"required"`
	DefaultValue *string  `json:"default_value"`
	Importance   string   `json:"importance"`
	Group        *string  `json:"group"`
	Width        string   `json:"width"`
	DisplayName  string   `json:"display_name"`
	Dependents   []string `json:"dependents"`
	Order        int      `json:"order"`
}

func TestPluginConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connector-plugins/FileStreamSink/config", ""), http.StatusNotFound, "Unknown plugin FileStreamSink.")

	for _, name := range []string{"MirrorSource", "MirrorSourceConnector", "org.apache.kafka.connect.mirror.MirrorSourceConnector"} {
		r := f.do("GET", "/connector-plugins/"+name+"/config", "")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `{"name":"name","type":"STRING","required":true,"default_value":null,"importance":"HIGH",`+
			`"documentation":"Globally unique name to use for this connector.","group":"Common","width":"MEDIUM","display_name":"Connector name","dependents":[],"order":1}`)
		keys := decode[[]configKey](t, r)
		byName := map[string]configKey{}
		for _, k := range keys {
			require.NotContains(t, byName, k.Name, "each key once")
			require.NotNil(t, k.Dependents)
			byName[k.Name] = k
		}
		require.Equal(t, "name", keys[0].Name, "the plugin's own keys come first")
		require.Contains(t, byName, "source.cluster.alias")
		require.True(t, byName["source.cluster.alias"].Required)
		require.Equal(t, "INT", byName["tasks.max"].Type)
		require.Equal(t, "1", *byName["tasks.max"].DefaultValue)
	}
}

// configInfos is ConfigInfos as clients read it.
type configInfos struct {
	Name       string   `json:"name"`
	ErrorCount int      `json:"error_count"`
	Groups     []string `json:"groups"`
	Configs    []struct {
		Definition *configKey `json:"definition"`
		Value      *struct {
			Name              string   `json:"name"`
			Value             *string  `json:"value"`
			RecommendedValues []string `json:"recommended_values"`
			Errors            []string `json:"errors"`
			Visible           bool     `json:"visible"`
		} `json:"value"`
	} `json:"configs"`
}

func TestValidateConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	// 200 whenever validation ran, errors or not; the name is connector.class from the body.
	r := f.do("PUT", "/connector-plugins/MirrorHeartbeat/config/validate", `{"connector.class":"MirrorHeartbeatConnector","tasks.max":0,"foo.bar":null}`)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Regexp(t, `^\{"name":"MirrorHeartbeatConnector","error_count":\d+,"groups":\["Common",`, r.body)
	// Entries without a definition come first (AbstractHerder.generateResult), then the keys in definition order.
	require.Contains(t, r.body, `"configs":[{"definition":null,"value":{"name":"foo.bar","value":null,"recommended_values":[],`+
		`"errors":["Null value can not be supplied as the configuration value."],"visible":true}},`+
		`{"definition":{"name":"name","type":"STRING","required":true,"default_value":null,"importance":"HIGH",`+
		`"documentation":"Globally unique name to use for this connector.","group":"Common","width":"MEDIUM","display_name":"Connector name","dependents":[],"order":1},`+
		`"value":{"name":"name","value":null,"recommended_values":[],"errors":["Missing required configuration \"name\" which has no default value."],"visible":true}}`)
	infos := decode[configInfos](t, r)
	errs := map[string][]string{}
	total := 0
	var nullEntry bool
	for _, c := range infos.Configs {
		if c.Value == nil {
			continue
		}
		total += len(c.Value.Errors)
		if len(c.Value.Errors) > 0 {
			errs[c.Value.Name] = c.Value.Errors
		}
		if c.Value.Name == "foo.bar" {
			nullEntry = c.Definition == nil && c.Value.Value == nil
		}
	}
	require.Equal(t, total, infos.ErrorCount)
	require.Equal(t, []string{`Missing required configuration "name" which has no default value.`}, errs["name"], "kcctl adds a dummy name for this")
	require.Equal(t, []string{"Invalid value 0 for configuration tasks.max: Value must be at least 1"}, errs["tasks.max"])
	require.Equal(t, []string{"Null value can not be supplied as the configuration value."}, errs["foo.bar"])
	require.True(t, nullEntry, "an undefined key sent as null has a null definition")

	r = f.do("PUT", "/connector-plugins/MirrorSourceConnector/config/validate", jsonText(t, withName(sourceConfig(), "dummy-name")))
	require.Equal(t, http.StatusOK, r.status, r.body)
	infos = decode[configInfos](t, r)
	require.Zero(t, infos.ErrorCount, r.body)
	require.Equal(t, sourceClass, infos.Name)

	// connector.class must match the path: a trailing "Connector" is ignored on both sides.
	requireError(t, f.do("PUT", "/connector-plugins/MirrorCheckpoint/config/validate", `{"connector.class":"MirrorSourceConnector"}`),
		http.StatusBadRequest, "Included connector type MirrorSourceConnector does not match request type MirrorCheckpoint")

	// Failures that stop validation keep Connect's text, exception class included, with a 400.
	requireError(t, f.do("PUT", "/connector-plugins/MirrorSource/config/validate", `{"name":"x"}`), http.StatusBadRequest,
		"org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Connector config {name=x} contains no connector type")
	r = f.do("PUT", "/connector-plugins/Foo/config/validate", `{"connector.class":"com.example.Foo"}`)
	require.Equal(t, http.StatusBadRequest, r.status)
	// Connect 4.1.1's class prefix on this endpoint (it answers 500).
	require.Contains(t, r.body, `"message":"org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Failed to find any class that implements Connector and which name matches com.example.Foo, available connectors are: PluginDesc{klass=class org.apache.kafka.connect.mirror.MirrorCheckpointConnector`)
}

func withName(cfg map[string]string, name string) map[string]string {
	cfg["name"] = name
	return cfg
}
