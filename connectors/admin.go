package connectors

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// NewAdmin creates the connector's admin client of role (taskIndex as for ClientProps), its operations bounded
// by admin.timeout.ms where that is positive and by the client's default otherwise.
func (c Config) NewAdmin(role clientconfig.Role, connectorName string, taskIndex int, log *slog.Logger) (*kafka.Admin, error) {
	props, err := c.ClientProps(role, connectorName, taskIndex)
	if err != nil {
		return nil, err
	}
	admin, err := kafka.NewAdmin(props, log)
	if err != nil {
		return nil, fmt.Errorf("create the %s: %w", role, err)
	}
	if ms := c.values.Long(mirrorconfig.AdminTimeoutMsConfig); ms > 0 {
		admin.Timeout = time.Duration(ms) * time.Millisecond
	}
	return admin, nil
}
