package kafka

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClientErrorsDropValues: librdkafka quotes a rejected value, which may be a secret; kmirror's error
// keeps the property's name only.
func TestClientErrorsDropValues(t *testing.T) {
	const secret = "s3cret-from-a-provider"
	props := map[string]string{"bootstrap.servers": "127.0.0.1:1", "ssl.endpoint.identification.algorithm": secret}
	_, err := NewProducer(props, nil, func(Delivery) {})
	require.ErrorContains(t, err, `create producer: Invalid value for configuration property "ssl.endpoint.identification.algorithm"`)
	require.NotContains(t, err.Error(), secret)
	_, err = NewConsumer(map[string]string{"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "debug": secret}, nil)
	require.ErrorContains(t, err, `Invalid value for configuration property "debug"`)
	require.NotContains(t, err.Error(), secret)
	_, err = NewAdmin(props)
	require.NotContains(t, err.Error(), secret)
}
