package clientconfig

import "strings"

// admin translates the AdminClientConfig keys that are not common to every
// client.
func (t *translator) admin() {
	if v, ok := t.get("bootstrap.controllers"); ok {
		if strings.TrimSpace(v) != "" {
			t.fail("bootstrap.controllers", "talking to KRaft controllers directly is not supported; use bootstrap.servers")
		} else {
			t.drop("bootstrap.controllers")
		}
	}
	// librdkafka retries admin requests within the request timeout by itself.
	if _, ok := t.integer("retries", 0, javaIntMax); ok {
		t.drop("retries")
	}
	if n, ok := t.integer("default.api.timeout.ms", 0, javaIntMax); ok {
		t.cfg.DefaultAPITimeout = millis(n)
	}
}
