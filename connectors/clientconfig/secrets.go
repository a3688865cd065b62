package clientconfig

import "strings"

// secretNames are the client settings, Java's and librdkafka's, whose values are secrets, besides those that
// IsSecret recognises by their ending: Kafka types them PASSWORD (PEM keys and certificate chains given
// inline), and librdkafka's spellings of the same.
var secretNames = map[string]bool{
	"ssl.keystore.key":               true,
	"ssl.keystore.certificate.chain": true,
	"ssl.truststore.certificates":    true,
	"ssl.key.pem":                    true,
	"sasl.password":                  true,
}

// IsSecret tells whether a connector config key holds a client secret: a key of the client prefixes
// (source.cluster., target.producer., producer.override., ...) or a bare client setting whose value Kafka
// types PASSWORD (*.password, sasl.jaas.config, *.secret, inline PEM keys). Such values are never echoed back
// (validation shows them as Connect shows a Password, "[hidden]").
func IsSecret(key string) bool {
	k := strings.ToLower(key)
	if strings.HasSuffix(k, ".password") || strings.HasSuffix(k, "jaas.config") || strings.HasSuffix(k, ".secret") {
		return true
	}
	for name := range secretNames {
		if k == name || strings.HasSuffix(k, "."+name) {
			return true
		}
	}
	return false
}
