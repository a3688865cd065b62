package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// getOffsets is GET /connectors/{connector}/offsets, in any target state.
func (s *server) getOffsets(w http.ResponseWriter, r *http.Request) error {
	c, err := s.existingConnector(r)
	if err != nil {
		return err
	}
	offs, err := s.Store.Offsets(r.Context(), c.Name)
	if err != nil {
		return err
	}
	out := connectorOffsets{Offsets: make([]connectorOffset, 0, len(offs))}
	for _, o := range offs {
		out.Offsets = append(out.Offsets, connectorOffset{Partition: o.Partition, Offset: o.Offset})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// alterOffsets is PATCH /connectors/{connector}/offsets. The checks run in Connect's order: a body with
// offsets, a known connector, a STOPPED connector, then the offsets' format and the connector's own rules. The
// store re-checks existence and the STOPPED state in the transaction that writes.
func (s *server) alterOffsets(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeBody(w, r, decodeOffsetsRequest)
	if err != nil {
		return err
	}
	if !req.present || len(req.offsets) == 0 {
		return errorf(http.StatusBadRequest, "Partitions / offsets need to be provided for an alter offsets request")
	}
	c, err := s.existingConnector(r)
	if err != nil {
		return err
	}
	if c.TargetState != store.TargetStopped {
		return notStopped(c.Name)
	}
	offsets, err := normalizeOffsets(req.offsets)
	if err != nil {
		return err
	}
	if err := checkPartitionSizes(offsets); err != nil {
		return err
	}
	class, managed := s.connectorOffsetRules(c.Config)
	if managed {
		if err := validateMirrorOffsets(class, offsets); err != nil {
			return err
		}
	}
	return s.writeOffsets(w, r, c.Name, class, toStoreOffsets(offsets), false, managed)
}

// resetOffsets is DELETE /connectors/{connector}/offsets: every offset of the connector is removed.
func (s *server) resetOffsets(w http.ResponseWriter, r *http.Request) error {
	c, err := s.existingConnector(r)
	if err != nil {
		return err
	}
	if c.TargetState != store.TargetStopped {
		return notStopped(c.Name)
	}
	class, managed := s.connectorOffsetRules(c.Config)
	return s.writeOffsets(w, r, c.Name, class, nil, true, managed)
}

func (s *server) writeOffsets(w http.ResponseWriter, r *http.Request, name, class string, offsets []kmtype.Offset, reset, managed bool) error {
	var err error
	if class == mirrorconfig.SourceConnectorClass && s.worker.ExactlyOnceSource.Enabled() {
		err = s.requestOffsets(r, name, offsets, reset)
	} else {
		err = s.Store.AlterOffsets(r.Context(), name, offsets, reset)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, "Connector %s not found", name)
	case errors.Is(err, store.ErrNotStopped):
		return notStopped(name)
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusOK, message{Message: offsetsMessage(reset, managed)})
	return nil
}

func notStopped(name string) *httpError {
	return errorf(http.StatusBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. "+
		"This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
}

// offsetsMessage is Worker.completeModifyOffsetsCallback's text. The Mirror connectors' alterOffsets returns
// true, giving the short form; a connector that leaves offsets alone gets the "framework-managed" form.
func offsetsMessage(reset, alteredByConnector bool) string {
	what := "altered"
	if reset {
		what = "reset"
	}
	if alteredByConnector {
		return "The offsets for this connector have been " + what + " successfully"
	}
	return "The Connect framework-managed offsets for this connector have been " + what +
		" successfully. However, if this connector manages offsets externally, they will need to be manually " + what +
		" in the system that the connector uses."
}

// connectorOffsetRules tells which Mirror connector's alterOffsets applies to a stored config.
func (s *server) connectorOffsetRules(config map[string]string) (class string, mirror bool) {
	p, ok := s.plugins.lookup(config[connectorClassKey])
	if !ok {
		return "", false
	}
	switch p.Class {
	case mirrorconfig.SourceConnectorClass, mirrorconfig.CheckpointConnectorClass, mirrorconfig.HeartbeatConnectorClass:
		return p.Class, true
	}
	return "", false
}

// normalOffset is one requested offset after Connect's normalization: values are what the internal JSON
// converter gives back (integers as int64, other numbers as float64), keys in request order.
type normalOffset struct {
	partition *jsonObject
	offset    *jsonObject
}

// bigInteger is an integer literal beyond 64 bits, which Jackson reads as java.math.BigInteger.
type bigInteger string

// normalizeOffsets reproduces Worker.normalizeSourceConnectorOffsets: OffsetUtils.validateFormat on each
// partition and offset (only primitive values), then a round trip through the JSON converter. Connect answers
// a format error with 500; kmirror with 400 and the same text.
func normalizeOffsets(entries []offsetEntry) ([]normalOffset, error) {
	out := make([]normalOffset, 0, len(entries))
	for _, e := range entries {
		var n normalOffset
		var err error
		if n.partition, err = normalizeObject(e.partition); err != nil {
			return nil, err
		}
		if n.offset, err = normalizeObject(e.offset); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func normalizeObject(obj *jsonObject) (*jsonObject, error) {
	if obj == nil {
		return nil, nil
	}
	out := &jsonObject{keys: obj.keys, values: make(map[string]any, len(obj.values))}
	for _, k := range obj.keys {
		v := normalizeValue(obj.values[k])
		var kind string
		switch v.(type) {
		case map[string]any:
			kind = "MAP"
		case []any:
			kind = "ARRAY"
		case bigInteger:
			kind = "class java.math.BigInteger"
		}
		if kind != "" {
			return nil, errorf(http.StatusBadRequest, "Offsets may only contain primitive types as values, but field %s contains %s", k, kind)
		}
		out.values[k] = v
	}
	return out, nil
}

// normalizeValue turns a decoded JSON number into the Java value Connect ends up holding.
func normalizeValue(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if ok && i.IsInt64() {
			return i.Int64()
		}
		return bigInteger(s)
	}
	f, err := n.Float64()
	if math.IsInf(f, 0) {
		// Jackson reads an out-of-range double as Infinity and the converter writes it back as a string.
		return configdef.JavaDouble(f)
	}
	if err != nil {
		return bigInteger(s)
	}
	return f
}

// checkPartitionSizes refuses a partition whose JSON, the key the store files its offset under, is longer than
// maxNameBytes (see there).
func checkPartitionSizes(offsets []normalOffset) error {
	for i, o := range offsets {
		if o.partition == nil {
			continue
		}
		b, err := json.Marshal(o.partition.values)
		if err != nil {
			return badBody(`"offsets[%d].partition" cannot be stored: %v`, i, err)
		}
		if len(b) > maxNameBytes {
			return badBody(`"offsets[%d].partition" is %d bytes as JSON; kmirror stores partitions of at most %d bytes`, i, len(b), maxNameBytes)
		}
	}
	return nil
}

// Partition and offset keys of the Mirror connectors (MirrorUtils, Checkpoint, Heartbeat).
const (
	clusterKey            = "cluster"
	topicKey              = "topic"
	partitionKey          = "partition"
	offsetKey             = "offset"
	groupKey              = "group"
	sourceClusterAliasKey = "sourceClusterAlias"
	targetClusterAliasKey = "targetClusterAlias"
)

// mirrorPartitionRules is what one MirrorMaker connector requires of a source partition, checked in this order:
// string members, then an integer "partition" member, then the offset.
type mirrorPartitionRules struct {
	strings   []string
	partition bool
	// onlyZeroOffset: the connector keeps no real position in its offsets (checkpoints, heartbeats), so 0 is
	// the only offset it accepts.
	onlyZeroOffset bool
}

var mirrorOffsetRules = map[string]mirrorPartitionRules{
	mirrorconfig.SourceConnectorClass:     {strings: []string{clusterKey, topicKey}, partition: true},
	mirrorconfig.CheckpointConnectorClass: {strings: []string{groupKey, topicKey}, partition: true, onlyZeroOffset: true},
	mirrorconfig.HeartbeatConnectorClass:  {strings: []string{sourceClusterAliasKey, targetClusterAliasKey}, onlyZeroOffset: true},
}

// validateMirrorOffsets is the alterOffsets of MirrorSourceConnector, MirrorCheckpointConnector and
// MirrorHeartbeatConnector. Connect answers their errors with 500; kmirror with 400 and the same text.
func validateMirrorOffsets(class string, offsets []normalOffset) error {
	rules, ok := mirrorOffsetRules[class]
	if !ok {
		return nil
	}
	for _, o := range offsets {
		if o.offset == nil {
			continue // tombstones are always allowed, so garbage can be cleaned up
		}
		if o.partition == nil {
			return errorf(http.StatusBadRequest, "Source partitions may not be null")
		}
		for _, k := range rules.strings {
			if err := validatePartitionString(o.partition, k); err != nil {
				return err
			}
		}
		if rules.partition {
			if err := validatePartitionPartition(o.partition); err != nil {
				return err
			}
		}
		if err := validateSourceOffset(o.partition, o.offset, rules.onlyZeroOffset); err != nil {
			return err
		}
	}
	return nil
}

// validatePartitionString is MirrorUtils.validateSourcePartitionString.
func validatePartitionString(partition *jsonObject, key string) error {
	v, ok := partition.values[key]
	if !ok {
		return errorf(http.StatusBadRequest, "Source partition %s is missing the '%s' key, which is required", javaValueString(partition), key)
	}
	if _, ok := v.(string); !ok {
		return errorf(http.StatusBadRequest, "Source partition %s has an invalid value %s for the '%s' key, which must be a string",
			javaValueString(partition), javaValueString(v), key)
	}
	return nil
}

// validatePartitionPartition is MirrorUtils.validateSourcePartitionPartition, down to its use of
// Number.intValue for the sign check.
func validatePartitionPartition(partition *jsonObject) error {
	v, ok := partition.values[partitionKey]
	if !ok {
		return errorf(http.StatusBadRequest, "Source partition %s is missing the '%s' key, which is required", javaValueString(partition), partitionKey)
	}
	n, ok := v.(int64)
	if !ok || n > math.MaxInt32 {
		return errorf(http.StatusBadRequest, "Source partition %s has an invalid value %s for the '%s' key, which must be an integer",
			javaValueString(partition), javaValueString(v), partitionKey)
	}
	if int32(n) < 0 {
		return errorf(http.StatusBadRequest, "Source partition %s has an invalid value %s for the '%s' key, which cannot be negative",
			javaValueString(partition), javaValueString(v), partitionKey)
	}
	return nil
}

// validateSourceOffset is MirrorUtils.validateSourceOffset; onlyZero is for the checkpoint and heartbeat
// connectors, which accept nothing but 0.
func validateSourceOffset(partition, offset *jsonObject, onlyZero bool) error {
	if offset == nil {
		return nil
	}
	v, ok := offset.values[offsetKey]
	if !ok {
		return errorf(http.StatusBadRequest, "Source offset %s for source partition %s is missing the '%s' key, which is required",
			javaValueString(offset), javaValueString(partition), offsetKey)
	}
	n, ok := v.(int64)
	switch {
	case !ok:
		return errorf(http.StatusBadRequest, "Source offset %s for source partition %s has an invalid value %s for the '%s' key, which must be an integer",
			javaValueString(offset), javaValueString(partition), javaValueString(v), offsetKey)
	case onlyZero && n != 0:
		return errorf(http.StatusBadRequest, "Source offset %s for source partition %s has an invalid value %s for the '%s' key; the only accepted value is 0",
			javaValueString(offset), javaValueString(partition), javaValueString(v), offsetKey)
	case !onlyZero && n < 0:
		return errorf(http.StatusBadRequest, "Source offset %s for source partition %s has an invalid value %s for the '%s' key, which cannot be negative",
			javaValueString(offset), javaValueString(partition), javaValueString(v), offsetKey)
	}
	return nil
}

// toStoreOffsets converts validated offsets for the store. Connect collects them in a map keyed by partition,
// so a partition given twice keeps its last offset; the store would refuse the duplicate.
func toStoreOffsets(offsets []normalOffset) []kmtype.Offset {
	index := map[string]int{}
	var out []kmtype.Offset
	for _, o := range offsets {
		var so kmtype.Offset
		if o.partition != nil {
			so.Partition = o.partition.values
		}
		if o.offset != nil {
			so.Offset = o.offset.values
		}
		key := canonicalJSON(so.Partition)
		if i, ok := index[key]; ok {
			out[i] = so
			continue
		}
		index[key] = len(out)
		out = append(out, so)
	}
	return out
}

func canonicalJSON(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
