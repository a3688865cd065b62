package kafkafake

import "errors"

// Error is an error of the fake cluster, classified as librdkafka classifies its own.
type Error struct {
	msg                         string
	retriable, fatal, abortable bool
}

func (e *Error) Error() string { return e.msg }

// The errors the fake reports. Compare with errors.Is, or classify with the Is functions.
var (
	ErrOffsetOutOfRange = &Error{msg: "kafkafake: offset out of range"}
	ErrUnknownTopic     = &Error{msg: "kafkafake: unknown topic or partition"}
	ErrQueueFull        = &Error{msg: "kafkafake: local queue full"}
	ErrTimedOut         = &Error{msg: "kafkafake: request timed out", retriable: true}
	ErrNoRoom           = &Error{msg: "kafkafake: the target is out of room", retriable: true}
	ErrPurged           = &Error{msg: "kafkafake: purged"}
	ErrRecordTooLarge   = &Error{msg: "kafkafake: record too large"}
	ErrFatal            = &Error{msg: "kafkafake: fatal producer error", fatal: true}
	ErrFenced           = &Error{msg: "kafkafake: producer fenced", fatal: true}
	ErrAuthentication   = &Error{msg: "kafkafake: authentication failed"}
	ErrTxnAbortable     = &Error{msg: "kafkafake: a record of the transaction failed", abortable: true}
	ErrState            = &Error{msg: "kafkafake: erroneous state"}
	ErrClosed           = &Error{msg: "kafkafake: client closed"}
)

// IsRetriable tells whether err is transient.
func IsRetriable(err error) bool { return has(err, func(e *Error) bool { return e.retriable }) }

// IsFatal tells whether err ends the producer.
func IsFatal(err error) bool { return has(err, func(e *Error) bool { return e.fatal }) }

// IsFenced tells whether a newer producer with the same transactional id fenced this one.
func IsFenced(err error) bool { return errors.Is(err, ErrFenced) }

// TxnRequiresAbort tells whether a transactional call's error leaves the transaction only to be aborted.
func TxnRequiresAbort(err error) bool { return has(err, func(e *Error) bool { return e.abortable }) }

// IsOffsetOutOfRange tells whether a fetch position is outside the partition's log.
func IsOffsetOutOfRange(err error) bool { return errors.Is(err, ErrOffsetOutOfRange) }

// IsUnknownTopic tells whether the topic or partition does not exist.
func IsUnknownTopic(err error) bool { return errors.Is(err, ErrUnknownTopic) }

// IsPurged tells whether a delivery failed because the producer was purged.
func IsPurged(err error) bool { return errors.Is(err, ErrPurged) }

// IsRecordTooLarge tells whether the target refused a record for its size.
func IsRecordTooLarge(err error) bool { return errors.Is(err, ErrRecordTooLarge) }

// IsAuthentication tells whether a SASL handshake failed.
func IsAuthentication(err error) bool { return errors.Is(err, ErrAuthentication) }

func has(err error, pred func(*Error) bool) bool {
	var e *Error
	return errors.As(err, &e) && pred(e)
}
