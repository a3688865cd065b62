package clientconfig

import "strings"

// forced lists the librdkafka properties MM2 sets on the role whatever the
// user says, as MirrorConnectorConfig forces enable.auto.commit=false on its
// consumers. MM2 consumers are assigned partitions and never commit or store
// offsets: kmirror keeps the positions itself.
func (t *translator) forced() map[string]string {
	if t.kind != kindConsumer {
		return nil
	}
	f := map[string]string{
		"enable.auto.commit":       "false",
		"enable.auto.offset.store": "false",
	}
	if t.role == ReplicationConsumer {
		// The poll loop must not see partition-EOF events in its record stream.
		f["enable.partition.eof"] = "false"
	}
	return f
}

// applyDefaults sets the values kmirror wants where neither a Java key nor a
// librdkafka pass-through key set the property.
func (t *translator) applyDefaults() {
	for k, v := range t.defaults {
		if _, ok := t.out[k]; !ok {
			t.out[k] = v
		}
	}
}

// applyForced sets the forced properties, and gives consumers the group.id
// confluent-kafka-go demands. The id is never joined or committed to; built
// from client.id, which MM2 makes unique per connector, task and role, it
// collides with no real group.
func (t *translator) applyForced() {
	for k, v := range t.forced() {
		t.out[k] = v
		t.from[k] = ""
	}
	if t.kind == kindConsumer && t.out["group.id"] == "" {
		id := t.out["client.id"]
		if id == "" {
			id = "kmirror-" + strings.ReplaceAll(t.role.String(), " ", "-")
		}
		t.out["group.id"] = id
	}
}
