package mirrorconfig

import (
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// Messages of Connect's preflight checks for exactly-once source support
// (DistributedHerder.validateSourceConnectorExactlyOnceSupport and ...TransactionBoundary).
const (
	// The first sentence is Connect's own text for a worker without exactly-once source
	// support; the rest says how to give kmirror's workers that support.
	eosNotEnabledMessage = "This worker does not have exactly-once source support enabled. " +
		"Start every kmirror worker with --exactly-once-source-support=enabled, or set exactly.once.support to \"requested\"."
	eosUnsupportedMessage = "The connector does not support exactly-once semantics with the provided configuration."
	eosNoPreflightMessage = "The connector does not implement the API required for preflight validation of exactly-once " +
		"source support. Please consult the documentation for the connector to determine whether it supports exactly-once " +
		"semantics, and then consider reconfiguring the connector to use the value \"requested\" for this property (which will " +
		"disable this preflight check and allow the connector to be created)."
	connectorBoundariesMessage = "The connector does not support connector-defined transaction boundaries with the given " +
		"configuration. Please reconfigure it to use a different transaction boundary definition."
)

// checkExactlyOnce adds the distributed herder's exactly-once preflight errors to the
// framework's values. Like Connect it only looks at values that passed their own validation.
func checkExactlyOnce(p Plugin, props map[string]*string, values []*configdef.ConfigValue, w Worker) {
	for _, cv := range values {
		if len(cv.Errors) > 0 || cv.Value == nil {
			continue
		}
		level := strings.ToUpper(strings.TrimSpace(*cv.Value))
		switch {
		case cv.Name == ExactlyOnceSupportConfig && level == "REQUIRED":
			if !w.ExactlyOnceSource.Enabled() {
				cv.AddError(eosNotEnabledMessage)
			}
			switch {
			case p.Class != SourceConnectorClass:
				// Only MirrorSourceConnector answers SourceConnector.exactlyOnceSupport.
				cv.AddError(eosNoPreflightMessage)
			case !consumerUsesReadCommitted(props):
				cv.AddError(eosUnsupportedMessage)
			}
		case cv.Name == TransactionBoundaryConfig && level == "CONNECTOR":
			// No MM2 connector defines its own transaction boundaries.
			cv.AddError(connectorBoundariesMessage)
		}
	}
}

// consumerUsesReadCommitted mirrors MirrorSourceConnector.consumerUsesReadCommitted: the
// replication consumer's isolation.level comes from consumer.* overridden by
// source.consumer.*.
func consumerUsesReadCommitted(props map[string]*string) bool {
	level := props["consumer.isolation.level"]
	if v, ok := props["source.consumer.isolation.level"]; ok {
		level = v
	}
	return level != nil && *level == "read_committed"
}
