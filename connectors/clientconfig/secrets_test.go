package clientconfig

import "testing"

func TestIsSecret(t *testing.T) {
	for key, want := range map[string]bool{
		"source.cluster.ssl.truststore.password":              true,
		"target.cluster.sasl.jaas.config":                     true,
		"producer.override.sasl.jaas.config":                  true,
		"source.consumer.sasl.oauthbearer.client.secret":      true,
		"target.cluster.ssl.keystore.key":                     true,
		"source.admin.ssl.key.pem":                            true,
		"sasl.password":                                       true,
		"source.cluster.SSL.KEY.PASSWORD":                     true,
		"source.cluster.ssl.truststore.location":              false,
		"source.cluster.sasl.mechanism":                       false,
		"target.cluster.ssl.certificate.pem":                  false,
		"topics":                                              false,
		"source.cluster.ssl.keystore.keyfile-not-a-real-name": false,
	} {
		if got := IsSecret(key); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", key, got, want)
		}
	}
}
