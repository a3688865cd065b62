package kafka

import (
	"fmt"
	"testing"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/stretchr/testify/require"
)

func TestIsAuthentication(t *testing.T) {
	for _, tc := range []struct {
		code ckafka.ErrorCode
		msg  string
		want bool
	}{
		{ckafka.ErrAuthentication, "sasl_ssl://b:9093/bootstrap: SASL authentication error: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512", true},
		{ckafka.ErrSsl, "ssl://b:9093/bootstrap: SSL handshake failed: error:0A000086:SSL routines::certificate verify failed", true},
		{ckafka.ErrTransport, "ssl://b:9093/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 alert bad certificate: SSL alert number 42", true},
		{ckafka.ErrTransport, "ssl://b:9093/bootstrap: Receive failed: error:0A00045C:SSL routines::tlsv13 alert certificate required: SSL alert number 116", true},
		// What a broker that is down or restarting looks like: wait it out.
		{ckafka.ErrTransport, "ssl://b:9093/bootstrap: SSL handshake failed: Disconnected: connecting to a PLAINTEXT broker listener?", false},
		{ckafka.ErrTransport, "b:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection refused", false},
		{ckafka.ErrTransport, "ssl://b:9093/bootstrap: Receive failed: SSL alert number 4200", false},
		{ckafka.ErrAllBrokersDown, "1/1 brokers are down", false},
		{ckafka.ErrTopicAuthorizationFailed, "Broker: Topic authorization failed", false},
	} {
		err := fmt.Errorf("read cluster metadata: %w", ckafka.NewError(tc.code, tc.msg, false))
		require.Equal(t, tc.want, IsAuthentication(err), "%v", err)
	}
	require.False(t, IsAuthentication(fmt.Errorf("not a Kafka error")))
}

func TestAuthenticationIsNotRetriable(t *testing.T) {
	refused := ckafka.NewError(ckafka.ErrTransport, "ssl://b:9093/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 alert bad certificate: SSL alert number 42", false)
	require.False(t, IsRetriable(refused), "same code as a dropped connection, but retrying cannot help")
	require.True(t, IsRetriable(ckafka.NewError(ckafka.ErrTransport, "b:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection refused", false)))
}
