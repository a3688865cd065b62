package mirrorconfig

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/require"
)

func config(class string, extra map[string]*string) map[string]*string {
	props := map[string]*string{"name": ptr("mm2"), "connector.class": ptr(class), "source.cluster.alias": ptr("us-east")}
	maps.Copy(props, extra)
	return props
}

func mustPlugin(t *testing.T, class string) Plugin {
	t.Helper()
	p, ok := LookupPlugin(class)
	require.True(t, ok)
	return p
}

func TestValidMinimalConfigs(t *testing.T) {
	for _, p := range Plugins() {
		got := Validate(p, config(p.Class, nil), nil)
		require.Zero(t, got.ErrorCount, p.Class)
		require.Equal(t, p.Class, got.Name)
		require.Equal(t, []string{"Common", "Transforms", "Predicates", "Error Handling", "Topic Creation", "Exactly Once Support", "offsets.topic"}, got.Groups)
		require.Empty(t, ErrorMessage(got))
	}
}

// These are the places where kmirror deliberately answers differently from a Java worker:
// it reports what it cannot do instead of accepting the config and failing later.
func TestValidateKmirrorRules(t *testing.T) {
	tests := []struct {
		name       string
		class      string
		props      map[string]*string
		key        string
		noDef      bool
		wantErrors []string
	}{
		{"json converter", HeartbeatConnectorClass, map[string]*string{"key.converter": ptr("org.apache.kafka.connect.json.JsonConverter")},
			"key.converter", false, []string{"Invalid value org.apache.kafka.connect.json.JsonConverter for configuration key.converter: kmirror replicates records as raw bytes and supports only org.apache.kafka.connect.converters.ByteArrayConverter"}},
		{"unknown converter", SourceConnectorClass, map[string]*string{"value.converter": ptr("io.confluent.connect.avro.AvroConverter")},
			"value.converter", false, []string{
				"Invalid value io.confluent.connect.avro.AvroConverter for configuration value.converter: Class io.confluent.connect.avro.AvroConverter could not be found.",
				"Invalid value io.confluent.connect.avro.AvroConverter for configuration value.converter: kmirror replicates records as raw bytes and supports only org.apache.kafka.connect.converters.ByteArrayConverter"}},
		{"header converter alias", CheckpointConnectorClass, map[string]*string{"header.converter": ptr("SimpleHeaderConverter")},
			"header.converter", false, []string{"Invalid value SimpleHeaderConverter for configuration header.converter: kmirror replicates records as raw bytes and supports only org.apache.kafka.connect.converters.ByteArrayConverter"}},
		{"transforms", SourceConnectorClass, map[string]*string{"transforms": ptr("route, mask")},
			"transforms", false, []string{"Invalid value [route, mask] for configuration transforms: kmirror replicates records as raw bytes and does not run single message transforms (SMTs)"}},
		{"duplicate transforms", SourceConnectorClass, map[string]*string{"transforms": ptr("a,a")},
			"transforms", false, []string{
				"Invalid value [a, a] for configuration transforms: Duplicate alias provided.",
				"Invalid value [a, a] for configuration transforms: kmirror replicates records as raw bytes and does not run single message transforms (SMTs)"}},
		{"predicates", HeartbeatConnectorClass, map[string]*string{"predicates": ptr("p")},
			"predicates", false, []string{"Invalid value [p] for configuration predicates: kmirror does not run single message transforms (SMTs), so predicates cannot be used"}},
		{"exactly-once required, source without read_committed", SourceConnectorClass, map[string]*string{"exactly.once.support": ptr("required")},
			"exactly.once.support", false, []string{
				"MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with isolation.level set to 'read_committed'; otherwise, records from aborted and uncommitted transactions will be replicated from the source cluster to the target cluster.",
				eosNotEnabledMessage}},
		{"exactly-once required, source with read_committed", SourceConnectorClass, map[string]*string{"exactly.once.support": ptr("required"), "source.consumer.isolation.level": ptr("read_committed")},
			"exactly.once.support", false, []string{eosNotEnabledMessage}},
		{"exactly-once required, heartbeat", HeartbeatConnectorClass, map[string]*string{"exactly.once.support": ptr(" REQUIRED ")},
			"exactly.once.support", false, []string{eosNotEnabledMessage, eosNoPreflightMessage}},
		{"connector-defined transaction boundaries", SourceConnectorClass, map[string]*string{"transaction.boundary": ptr("connector")},
			"transaction.boundary", false, []string{connectorBoundariesMessage}},
		{"regex RE2 rejects", SourceConnectorClass, map[string]*string{"topics": ptr("orders, (?!internal).*")},
			"topics", false, []string{"Invalid value orders, (?!internal).* for configuration topics: pattern \"(?!internal).*\" is not a regular expression kmirror can use (Go RE2 syntax: no look-around or back-references): error parsing regexp: invalid or unsupported Perl syntax: `(?!`"}},
		{"regex broken", SourceConnectorClass, map[string]*string{"config.properties.exclude": ptr("a[")},
			"config.properties.exclude", false, []string{"Invalid value a[ for configuration config.properties.exclude: pattern \"a[\" is not a regular expression kmirror can use (Go RE2 syntax: no look-around or back-references): error parsing regexp: missing closing ]: `[)$`"}},
		{"group regex", CheckpointConnectorClass, map[string]*string{"groups.exclude": ptr(`(a)\1`)},
			"groups.exclude", false, []string{"Invalid value (a)\\1 for configuration groups.exclude: pattern \"(a)\\\\1\" is not a regular expression kmirror can use (Go RE2 syntax: no look-around or back-references): error parsing regexp: invalid escape sequence: `\\1`"}},
		{"checkpoint reads topics without defining it", CheckpointConnectorClass, map[string]*string{"topics.exclude": ptr("x++")},
			"topics.exclude", true, []string{"Invalid value x++ for configuration topics.exclude: pattern \"x++\" is not a regular expression kmirror can use (Go RE2 syntax: no look-around or back-references): error parsing regexp: invalid nested repetition operator: `++`"}},
		{"custom replication policy", SourceConnectorClass, map[string]*string{"replication.policy.class": ptr("com.example.MyPolicy")},
			"replication.policy.class", false, []string{
				"Invalid value com.example.MyPolicy for configuration replication.policy.class: Class com.example.MyPolicy could not be found.",
				"Invalid value com.example.MyPolicy for configuration replication.policy.class: kmirror supports only org.apache.kafka.connect.mirror.DefaultReplicationPolicy and org.apache.kafka.connect.mirror.IdentityReplicationPolicy (full or simple class name)"}},
		{"wrong filter", CheckpointConnectorClass, map[string]*string{"group.filter.class": ptr("org.apache.kafka.connect.mirror.DefaultTopicFilter")},
			"group.filter.class", false, []string{"Invalid value org.apache.kafka.connect.mirror.DefaultTopicFilter for configuration group.filter.class: kmirror supports only org.apache.kafka.connect.mirror.DefaultGroupFilter"}},
		{"null value of a connector key", SourceConnectorClass, map[string]*string{"tasks.max": nil},
			"tasks.max", false, []string{"Invalid value null for configuration tasks.max: Value must be non-null", NullValueMessage}},
		{"null value of a key without validator", SourceConnectorClass, map[string]*string{"topics": nil},
			"topics", false, []string{NullValueMessage}},
		{"null value of an undefined key", HeartbeatConnectorClass, map[string]*string{"foo.bar": nil},
			"foo.bar", true, []string{NullValueMessage}},
		{"unknown task assignment", SourceConnectorClass, map[string]*string{TaskAssignmentConfig: ptr("round-robin")},
			TaskAssignmentConfig, true, []string{"Invalid value round-robin for configuration kmirror.task.assignment: String must be one of: topics, partitions"}},
		{"too short a sustain", SourceConnectorClass, map[string]*string{TaskMovesSustainConfig: ptr("10")},
			TaskMovesSustainConfig, true, []string{"Invalid value 10 for configuration kmirror.task.moves.sustain.ms: Value must be at least 1000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Validate(mustPlugin(t, tc.class), config(tc.class, tc.props), nil)
			e := entry(got, tc.key)
			require.Equal(t, tc.noDef, e.Definition == nil)
			require.Equal(t, tc.wantErrors, e.Value.Errors)
			require.Equal(t, len(tc.wantErrors), got.ErrorCount, "no other errors expected")
		})
	}
}

func TestValidateConverterVersion(t *testing.T) {
	// Connect loses this error when the connector's own values replace the framework's;
	// kmirror keeps it, on both keys as Connect adds it.
	got := Validate(mustPlugin(t, SourceConnectorClass), config(SourceConnectorClass, map[string]*string{
		"key.converter": ptr("ByteArray"), "key.converter.plugin.version": ptr("3.9.0"),
	}), nil)
	want := []string{"Plugin org.apache.kafka.connect.converters.ByteArrayConverter not found that matches the version range [3.9.0,3.9.0], available versions: [4.1.1]"}
	require.Equal(t, want, entry(got, "key.converter").Value.Errors)
	require.Equal(t, want, entry(got, "key.converter.plugin.version").Value.Errors)
	require.Equal(t, 2, got.ErrorCount)
}

func TestValidateAcceptsWhatKmirrorRuns(t *testing.T) {
	tests := []struct {
		class string
		props map[string]*string
	}{
		{SourceConnectorClass, map[string]*string{"replication.policy.class": ptr("IdentityReplicationPolicy")}},
		{SourceConnectorClass, map[string]*string{"replication.policy.class": ptr("org.apache.kafka.connect.mirror.DefaultReplicationPolicy")}},
		{SourceConnectorClass, map[string]*string{"key.converter": ptr("ByteArrayConverter"), "value.converter": ptr("ByteArray"),
			"header.converter": ptr("org.apache.kafka.connect.converters.ByteArrayConverter"), "key.converter.plugin.version": ptr("[4.0,5.0)")}},
		{SourceConnectorClass, map[string]*string{"topics": ptr("orders\\..*, \\Qa.b\\E, payments-[0-9]+"), "topics.exclude": ptr("")}},
		{SourceConnectorClass, map[string]*string{"transforms": ptr(""), "exactly.once.support": ptr("requested")}},
		{CheckpointConnectorClass, map[string]*string{"groups": ptr("(app|svc)-.*"), "topic.filter.class": ptr("org.apache.kafka.connect.mirror.DefaultTopicFilter")}},
		// Patterns that only compile once joined are accepted, as Java accepts them.
		{CheckpointConnectorClass, map[string]*string{"groups": ptr("(a, b)")}},
	}
	for _, tc := range tests {
		got := Validate(mustPlugin(t, tc.class), config(tc.class, tc.props), nil)
		require.Zero(t, got.ErrorCount, "%v", tc.props)
	}
}

func TestValidateRendersResolvedClassNames(t *testing.T) {
	got := Validate(mustPlugin(t, SourceConnectorClass),
		config(SourceConnectorClass, map[string]*string{"replication.policy.class": ptr("IdentityReplicationPolicy")}), nil)
	require.Equal(t, ptr(identityReplicationPolicyClass), entry(got, "replication.policy.class").Value.Value)
}

func TestValidateMergesClientErrors(t *testing.T) {
	var seen map[string]string
	clientErrors := func(props map[string]string) map[string][]string {
		seen = props
		return map[string][]string{
			"security.protocol":               {"security.protocol: kmirror cannot use this with librdkafka"},
			"source.consumer.isolation.level": {"Invalid value x for configuration isolation.level: String must be one of: read_committed, read_uncommitted"},
			"target.producer.batch.size":      nil,
			"source.cluster.sasl.login.class": {"sasl.login.class is not supported"},
		}
	}
	props := config(SourceConnectorClass, map[string]*string{
		"source.consumer.isolation.level": ptr("x"),
		"source.cluster.sasl.login.class": ptr("com.example.Login"),
		"foo":                             nil,
	})
	got := Validate(mustPlugin(t, SourceConnectorClass), props, clientErrors)

	require.NotContains(t, seen, "foo", "null properties are not passed on")
	require.Equal(t, "mm2", seen["name"])
	require.Equal(t, []string{"security.protocol: kmirror cannot use this with librdkafka"}, entry(got, "security.protocol").Value.Errors)
	require.NotNil(t, entry(got, "security.protocol").Definition)
	last := got.Configs[len(got.Configs)-2:]
	require.Nil(t, last[0].Definition)
	require.Equal(t, "source.cluster.sasl.login.class", last[0].Value.Name)
	require.Equal(t, ptr("com.example.Login"), last[0].Value.Value)
	require.Equal(t, "source.consumer.isolation.level", last[1].Value.Name)
	require.Equal(t, 4, got.ErrorCount) // three client errors and the null foo
}

func TestValidateConverterEntries(t *testing.T) {
	got := Validate(mustPlugin(t, HeartbeatConnectorClass), config(HeartbeatConnectorClass, map[string]*string{
		"value.converter": ptr("ByteArray"), "value.converter.converter.type": ptr("header"),
	}), nil)
	require.Zero(t, got.ErrorCount)
	last := got.Configs[len(got.Configs)-1]
	require.Equal(t, "value.converter.converter.type", last.Definition.Name)
	require.Equal(t, "converter.type", last.Definition.DisplayName)
	require.Equal(t, ptr("header"), last.Value.Value)
	require.Equal(t, ptr(byteArrayConverterClass), entry(got, "value.converter").Value.Value)
	require.True(t, entry(got, "value.converter.plugin.version").Value.Visible)
	require.False(t, entry(got, "key.converter.plugin.version").Value.Visible)
}

func TestValidateWithoutConnectorClass(t *testing.T) {
	got := Validate(mustPlugin(t, HeartbeatConnectorClass), map[string]*string{"source.cluster.alias": ptr("a")}, nil)
	require.Equal(t, "", got.Name)
	require.Equal(t, []string{
		`Missing required configuration "name" which has no default value.`,
	}, entry(got, "name").Value.Errors)
	require.Equal(t, []string{
		`Missing required configuration "connector.class" which has no default value.`,
	}, entry(got, "connector.class").Value.Errors)
}

func TestErrorMessage(t *testing.T) {
	got := Validate(mustPlugin(t, CheckpointConnectorClass), map[string]*string{
		"name": ptr(""), "connector.class": ptr(CheckpointConnectorClass), "tasks.max": ptr("0"), "zzz": nil,
	}, nil)
	require.Equal(t, 4, got.ErrorCount)
	require.Equal(t, "Connector configuration is invalid and contains the following 4 error(s):\n"+
		"Null value can not be supplied as the configuration value.\n"+
		"Invalid value  for configuration name: String may not be empty\n"+
		"Invalid value 0 for configuration tasks.max: Value must be at least 1\n"+
		`Missing required configuration "source.cluster.alias" which has no default value.`+"\n"+
		"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
		ErrorMessage(got))
}

// kmirror's own keys answer only when set: valid values add no entry, so a config without them validates as
// Connect validates it.
func TestValidateKmirrorKeysStayOutOfConnectsAnswer(t *testing.T) {
	p := mustPlugin(t, SourceConnectorClass)
	plain := Validate(p, config(p.Class, nil), nil)
	set := Validate(p, config(p.Class, map[string]*string{TaskAssignmentConfig: ptr(" Partitions "),
		TaskMovesEnabledConfig: ptr("false"), TaskMovesSustainConfig: ptr("5000")}), nil)
	require.Zero(t, set.ErrorCount)
	require.Equal(t, len(plain.Configs), len(set.Configs))
}
