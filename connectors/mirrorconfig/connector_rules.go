package mirrorconfig

import (
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// connectorRules applies the MM2 connectors' validate() overrides to the values their own
// ConfigDef produced, finding an existing value by name or appending a new one without a
// value, exactly as the Java connectors do.
func connectorRules(p Plugin, props map[string]*string, values []*configdef.ConfigValue) []*configdef.ConfigValue {
	addError := func(name, msg string) {
		for _, cv := range values {
			if cv.Name == name {
				cv.AddError(msg)
				return
			}
		}
		cv := newValue(name, nil)
		cv.AddError(msg)
		values = append(values, cv)
	}
	isFalse := func(name string) bool { raw := props[name]; return raw != nil && *raw == "false" }

	switch p.Class {
	case SourceConnectorClass:
		if raw := props[ExactlyOnceSupportConfig]; raw != nil && *raw == "required" && !consumerUsesReadCommitted(props) {
			addError(ExactlyOnceSupportConfig, "MirrorSourceConnector can only provide exactly-once guarantees when its source "+
				"consumer is configured with isolation.level set to 'read_committed'; otherwise, records from aborted and "+
				"uncommitted transactions will be replicated from the source cluster to the target cluster.")
		}
		if isFalse(EmitOffsetSyncsEnabledConfig) && configuresOffsetSyncs(props) {
			addError(EmitOffsetSyncsEnabledConfig, "MirrorSourceConnector can't setup offset-syncs feature while "+
				EmitOffsetSyncsEnabledConfig+" set to false")
		}
	case CheckpointConnectorClass:
		// A disabled checkpoint connector is not validated further (MirrorCheckpointConfig.validate).
		if isFalse(EnabledConfig) {
			break
		}
		if isFalse(EmitCheckpointsEnabledConfig) {
			addError(EmitCheckpointsEnabledConfig, "MirrorCheckpointConnector can't run with "+
				EmitCheckpointsEnabledConfig+" set to false")
		}
		if isFalse(EmitOffsetSyncsEnabledConfig) {
			addError(EmitOffsetSyncsEnabledConfig, "MirrorCheckpointConnector can't run without offset syncs")
		}
	}
	return values
}

// configuresOffsetSyncs reports whether any offset-syncs client or topic setting is present.
func configuresOffsetSyncs(props map[string]*string) bool {
	for name := range props {
		if strings.HasPrefix(name, offsetSyncsClientRolePrefix) || strings.HasPrefix(name, offsetSyncsTopicConfigPrefix) {
			return true
		}
	}
	return false
}
