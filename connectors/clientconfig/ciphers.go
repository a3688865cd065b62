package clientconfig

import "strings"

// openSSLCiphers maps the IANA/JSSE names Java takes in ssl.cipher.suites to
// OpenSSL's names, for the TLS 1.2 suites a current JVM and OpenSSL 3 share
// (as listed by `openssl ciphers -stdname`).
var openSSLCiphers = map[string]string{
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384":       "ECDHE-ECDSA-AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384":         "ECDHE-RSA-AES256-GCM-SHA384",
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256":       "ECDHE-ECDSA-AES128-GCM-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256":         "ECDHE-RSA-AES128-GCM-SHA256",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256":   "ECDHE-RSA-CHACHA20-POLY1305",
	"TLS_DHE_RSA_WITH_AES_256_GCM_SHA384":           "DHE-RSA-AES256-GCM-SHA384",
	"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256":           "DHE-RSA-AES128-GCM-SHA256",
	"TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256":     "DHE-RSA-CHACHA20-POLY1305",
	"TLS_DHE_DSS_WITH_AES_256_GCM_SHA384":           "DHE-DSS-AES256-GCM-SHA384",
	"TLS_DHE_DSS_WITH_AES_128_GCM_SHA256":           "DHE-DSS-AES128-GCM-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384":       "ECDHE-ECDSA-AES256-SHA384",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384":         "ECDHE-RSA-AES256-SHA384",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256":       "ECDHE-ECDSA-AES128-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256":         "ECDHE-RSA-AES128-SHA256",
	"TLS_DHE_RSA_WITH_AES_256_CBC_SHA256":           "DHE-RSA-AES256-SHA256",
	"TLS_DHE_RSA_WITH_AES_128_CBC_SHA256":           "DHE-RSA-AES128-SHA256",
	"TLS_DHE_DSS_WITH_AES_256_CBC_SHA256":           "DHE-DSS-AES256-SHA256",
	"TLS_DHE_DSS_WITH_AES_128_CBC_SHA256":           "DHE-DSS-AES128-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA":          "ECDHE-ECDSA-AES256-SHA",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA":            "ECDHE-RSA-AES256-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA":          "ECDHE-ECDSA-AES128-SHA",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA":            "ECDHE-RSA-AES128-SHA",
	"TLS_DHE_RSA_WITH_AES_256_CBC_SHA":              "DHE-RSA-AES256-SHA",
	"TLS_DHE_RSA_WITH_AES_128_CBC_SHA":              "DHE-RSA-AES128-SHA",
	"TLS_DHE_DSS_WITH_AES_256_CBC_SHA":              "DHE-DSS-AES256-SHA",
	"TLS_DHE_DSS_WITH_AES_128_CBC_SHA":              "DHE-DSS-AES128-SHA",
	"TLS_RSA_WITH_AES_256_GCM_SHA384":               "AES256-GCM-SHA384",
	"TLS_RSA_WITH_AES_128_GCM_SHA256":               "AES128-GCM-SHA256",
	"TLS_RSA_WITH_AES_256_CBC_SHA256":               "AES256-SHA256",
	"TLS_RSA_WITH_AES_128_CBC_SHA256":               "AES128-SHA256",
	"TLS_RSA_WITH_AES_256_CBC_SHA":                  "AES256-SHA",
	"TLS_RSA_WITH_AES_128_CBC_SHA":                  "AES128-SHA",
}

// tls13Ciphers cannot be restricted through librdkafka, which only sets the
// TLS 1.2 cipher list.
var tls13Ciphers = map[string]bool{
	"TLS_AES_128_GCM_SHA256":       true,
	"TLS_AES_256_GCM_SHA384":       true,
	"TLS_CHACHA20_POLY1305_SHA256": true,
	"TLS_AES_128_CCM_SHA256":       true,
	"TLS_AES_128_CCM_8_SHA256":     true,
}

// cipherSuites translates ssl.cipher.suites to an OpenSSL cipher list.
func (t *translator) cipherSuites(v string) {
	const key = "ssl.cipher.suites"
	var names []string
	for _, suite := range CommaList(v) {
		switch {
		case openSSLCiphers[suite] != "":
			names = append(names, openSSLCiphers[suite])
		case tls13Ciphers[suite]:
			t.warn(key, "%s not enforced: librdkafka cannot restrict TLS 1.3 cipher suites", suite)
		case suite == "TLS_EMPTY_RENEGOTIATION_INFO_SCSV":
			// A signalling value, not a cipher; OpenSSL always sends it.
		default:
			t.fail(key, "unknown or unsupported cipher suite %q", suite)
			return
		}
	}
	if len(names) == 0 {
		t.cfg.Dropped = append(t.cfg.Dropped, key)
		return
	}
	t.emit(key, "ssl.cipher.suites", strings.Join(names, ":"))
}
