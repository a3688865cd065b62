package configdef

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// marshal encodes like Connect's Jackson: no HTML escaping, compact.
func marshal(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestKeyInfoJSON(t *testing.T) {
	d := connectorDef().
		Define(Key{Name: "transforms", Type: TypeList, Default: []string{}, HasDefault: true, Importance: ImportanceLow,
			Documentation: "Aliases for the transformations to be applied to records.", Group: "Transforms", OrderInGroup: 12,
			Width: WidthLong, DisplayName: "Transforms"}).
		Define(Key{Name: "ratio", Type: TypeDouble, Default: 0.05, HasDefault: true, Importance: ImportanceLow, Documentation: "r"}).
		Define(Key{Name: "doc", Type: TypeString, HasDefault: true, Importance: ImportanceLow, Documentation: "<code>(Map<String, Object> config)</code>"})
	tests := map[string]string{
		"name":       `{"name":"name","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"Globally unique name to use for this connector.","group":"Common","width":"MEDIUM","display_name":"Connector name","dependents":[],"order":1}`,
		"tasks.max":  `{"name":"tasks.max","type":"INT","required":false,"default_value":"1","importance":"HIGH","documentation":"Maximum number of tasks to use for this connector.","group":"Common","width":"SHORT","display_name":"Tasks max","dependents":[],"order":3}`,
		"topics":     `{"name":"topics","type":"LIST","required":false,"default_value":".*","importance":"HIGH","documentation":"","group":null,"width":"NONE","display_name":"topics","dependents":[],"order":-1}`,
		"secret":     `{"name":"secret","type":"PASSWORD","required":false,"default_value":null,"importance":"HIGH","documentation":"","group":null,"width":"NONE","display_name":"secret","dependents":[],"order":-1}`,
		"transforms": `{"name":"transforms","type":"LIST","required":false,"default_value":"","importance":"LOW","documentation":"Aliases for the transformations to be applied to records.","group":"Transforms","width":"LONG","display_name":"Transforms","dependents":[],"order":12}`,
		"ratio":      `{"name":"ratio","type":"DOUBLE","required":false,"default_value":"0.05","importance":"LOW","documentation":"r","group":null,"width":"NONE","display_name":"ratio","dependents":[],"order":-1}`,
		"doc":        `{"name":"doc","type":"STRING","required":false,"default_value":null,"importance":"LOW","documentation":"<code>(Map<String, Object> config)</code>","group":null,"width":"NONE","display_name":"doc","dependents":[],"order":-1}`,
	}
	for name, want := range tests {
		k, ok := d.Lookup(name)
		require.True(t, ok)
		require.Equal(t, want, marshal(t, KeyInfo(k)), name)
	}
}

func TestConfigInfosJSON(t *testing.T) {
	values := byName(connectorDef().Validate(map[string]*string{"tasks.max": ptr("0"), "name": ptr("x")}))
	def, _ := connectorDef().Lookup("tasks.max")
	defInfo := KeyInfo(def)
	valueInfo := ValueInfo(values["tasks.max"])
	undefined := ValueInfo(ConfigValue{Name: "foo.bar", Visible: true, Errors: []string{"Null value can not be supplied as the configuration value."}})
	infos := ConfigInfos{
		Name:       "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
		ErrorCount: 2,
		Groups:     []string{"Common"},
		Configs:    []ConfigInfo{{Value: &undefined}, {Definition: &defInfo, Value: &valueInfo}},
	}
	want := `{"name":"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector","error_count":2,"groups":["Common"],"configs":[` +
		`{"definition":null,"value":{"name":"foo.bar","value":null,"recommended_values":[],"errors":["Null value can not be supplied as the configuration value."],"visible":true}},` +
		`{"definition":{"name":"tasks.max","type":"INT","required":false,"default_value":"1","importance":"HIGH","documentation":"Maximum number of tasks to use for this connector.","group":"Common","width":"SHORT","display_name":"Tasks max","dependents":[],"order":3},` +
		`"value":{"name":"tasks.max","value":"0","recommended_values":[],"errors":["Invalid value 0 for configuration tasks.max: Value must be at least 1"],"visible":true}}]}`
	require.Equal(t, want, marshal(t, infos))
}
