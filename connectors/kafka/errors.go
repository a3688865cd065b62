package kafka

import (
	"errors"
	"regexp"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// ErrQueueFull is returned by Produce when librdkafka's queue is full; drain deliveries and try again.
var ErrQueueFull = errors.New("producer queue is full")

// IsRetriable tells whether err is a Kafka error that may go away by itself (broker down, timeouts, leader
// moves), as opposed to one that needs an operator (authorization, invalid config, record too large).
func IsRetriable(err error) bool {
	var kerr ckafka.Error
	if !errors.As(err, &kerr) || IsAuthentication(err) {
		// A refused client certificate comes as a transport error, yet retrying cannot fix it.
		return false
	}
	if kerr.IsRetriable() || kerr.IsTimeout() {
		return true
	}
	switch kerr.Code() {
	case ckafka.ErrTransport, ckafka.ErrAllBrokersDown, ckafka.ErrMsgTimedOut, ckafka.ErrTimedOut,
		ckafka.ErrLeaderNotAvailable, ckafka.ErrNotLeaderForPartition, ckafka.ErrNetworkException,
		ckafka.ErrRequestTimedOut, ckafka.ErrNotEnoughReplicas, ckafka.ErrNotEnoughReplicasAfterAppend,
		ckafka.ErrUnknownTopicOrPart, ckafka.ErrBrokerNotAvailable, ckafka.ErrCoordinatorNotAvailable,
		ckafka.ErrUnknownPartition, ckafka.ErrResolve, ckafka.ErrNotCoordinator, ckafka.ErrCoordinatorLoadInProgress:
		return true
	}
	return false
}

// IsPurged tells whether err is the delivery error of a record the producer purged (Producer.Purge).
func IsPurged(err error) bool {
	return hasCode(err, ckafka.ErrPurgeQueue) || hasCode(err, ckafka.ErrPurgeInflight)
}

// IsGapless tells whether err is a producer's fatal error raised for enable.gapless.guarantee: a failure
// that could have left a gap in a partition's records stopped the producer, and the failed delivery says why.
func IsGapless(err error) bool {
	return hasCode(err, ckafka.ErrGaplessGuarantee)
}

// IsTopicExists tells whether err says a topic already exists.
func IsTopicExists(err error) bool {
	return hasCode(err, ckafka.ErrTopicAlreadyExists)
}

// IsUnknownTopic tells whether err says a topic or partition does not exist.
func IsUnknownTopic(err error) bool {
	return hasCode(err, ckafka.ErrUnknownTopicOrPart) || hasCode(err, ckafka.ErrUnknownTopic) || hasCode(err, ckafka.ErrUnknownPartition)
}

// IsAuthorization tells whether err is an authorization failure.
func IsAuthorization(err error) bool {
	return hasCode(err, ckafka.ErrTopicAuthorizationFailed) || hasCode(err, ckafka.ErrClusterAuthorizationFailed) ||
		hasCode(err, ckafka.ErrGroupAuthorizationFailed) || hasCode(err, ckafka.ErrTransactionalIDAuthorizationFailed)
}

// IsAuthentication tells whether err is a failed authentication: a failed SASL handshake (wrong password,
// unknown user, mechanism not enabled), a failed TLS handshake (the broker's certificate cannot be verified,
// no common protocol), or a broker refusing the client's certificate. librdkafka reports each as an error
// event and retries the connection for ever; like Java's AuthenticationException and SslAuthenticationException
// it is not a condition to wait out.
func IsAuthentication(err error) bool {
	var kerr ckafka.Error
	if !errors.As(err, &kerr) {
		return false
	}
	switch kerr.Code() {
	case ckafka.ErrAuthentication, ckafka.ErrSsl:
		// librdkafka reports a connection dropped during the TLS handshake as a transport error, not this.
		return true
	case ckafka.ErrTransport:
		return tlsCertificateRefused.MatchString(kerr.Error())
	}
	return false
}

// tlsCertificateRefused matches the TLS alerts by which a broker refuses the client's certificate (bad,
// unsupported, revoked, expired, unknown, unknown CA, required but missing). librdkafka reports them as a
// transport error ("Receive failed: ...: SSL alert number 42"), the code of any dropped connection, so
// OpenSSL's alert number is what tells them apart.
var tlsCertificateRefused = regexp.MustCompile(`SSL alert number (42|43|44|45|46|48|116)\b`)

// IsSecurityDisabled tells whether err says the cluster has no authorizer (ACL operations are unsupported).
func IsSecurityDisabled(err error) bool {
	return hasCode(err, ckafka.ErrSecurityDisabled)
}

// IsRecordTooLarge tells whether err says a record exceeds a size limit.
func IsRecordTooLarge(err error) bool {
	return hasCode(err, ckafka.ErrMsgSizeTooLarge) || hasCode(err, ckafka.ErrRecordListTooLarge)
}

// IsInvalidPartitions tells whether err says a partition count change is invalid (e.g. it is already larger).
func IsInvalidPartitions(err error) bool {
	return hasCode(err, ckafka.ErrInvalidPartitions)
}

func hasCode(err error, code ckafka.ErrorCode) bool {
	var kerr ckafka.Error
	return errors.As(err, &kerr) && kerr.Code() == code
}

// CodeError is a librdkafka error of the given code (an rd_kafka_resp_err_t), for the C data path (package
// cpath), so that the Is* helpers here answer for its errors as they do for confluent-kafka-go's.
func CodeError(code int, msg string, fatal bool) error {
	return ckafka.NewError(ckafka.ErrorCode(code), msg, fatal)
}
