package clientconfig

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
)

// ssl translates the SslConfigs keys. They only matter for SSL and SASL_SSL:
// with another protocol Java ignores them, so they are dropped unread, and a
// key store that would never be opened cannot fail the config.
func (t *translator) ssl() {
	if !t.usesSSL() {
		for key := range t.in {
			if _, java := javaKeys[key]; java && strings.HasPrefix(key, "ssl.") && t.pending[key] {
				t.drop(key)
			}
		}
		return
	}

	if v, ok := t.get("ssl.protocol"); ok {
		switch p := strings.TrimSpace(v); p {
		case "TLS", "TLSv1.2", "TLSv1.3":
			// OpenSSL negotiates the highest version both sides speak.
			t.drop("ssl.protocol")
		default:
			t.fail("ssl.protocol", "%q cannot be honoured: librdkafka negotiates TLS 1.2 or 1.3 and cannot be pinned to another version", p)
		}
	}
	if v, ok := t.get("ssl.enabled.protocols"); ok {
		protos := CommaList(v)
		bad := false
		for _, p := range protos {
			if p != "TLSv1.2" && p != "TLSv1.3" && p != "TLS" {
				t.fail("ssl.enabled.protocols", "%q cannot be honoured: librdkafka only negotiates TLSv1.2 and TLSv1.3", p)
				bad = true
			}
		}
		if !bad {
			t.drop("ssl.enabled.protocols")
			if len(protos) > 0 && !slices.Contains(protos, "TLSv1.2") {
				t.warn("ssl.enabled.protocols", "librdkafka cannot refuse TLSv1.2; the broker decides")
			}
		}
	}
	if t.has("ssl.provider") {
		t.drop("ssl.provider")
		t.warn("ssl.provider", "JSSE providers do not apply: librdkafka uses OpenSSL")
	}
	for _, key := range []string{"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation"} {
		if t.has(key) {
			t.drop(key)
		}
	}
	if v, ok := t.get("ssl.engine.factory.class"); ok {
		switch strings.TrimSpace(v) {
		case "", "org.apache.kafka.common.security.ssl.DefaultSslEngineFactory":
			t.drop("ssl.engine.factory.class")
		default:
			t.fail("ssl.engine.factory.class", "custom SSL engine factories cannot run in librdkafka; configure the key and trust stores instead")
		}
	}
	if v, ok := t.get("ssl.endpoint.identification.algorithm"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "https":
			t.emit("ssl.endpoint.identification.algorithm", "ssl.endpoint.identification.algorithm", "https")
		case "":
			// Java's way to turn host name verification off.
			t.emit("ssl.endpoint.identification.algorithm", "ssl.endpoint.identification.algorithm", "none")
		default:
			t.fail("ssl.endpoint.identification.algorithm", "invalid value %q: must be https, or empty to turn host name verification off", v)
		}
	}
	if v, ok := t.get("ssl.cipher.suites"); ok {
		t.cipherSuites(v)
	}
	t.keyStore()
	t.trustStore()
}

// Store formats, told apart by content: JDK 9+ loads PKCS#12 files declared as
// JKS and the reverse, so the declared type is not to be trusted.
const (
	storeUnknown = iota
	storeJKS
	storeJCEKS
	storePKCS12
	storePEM
)

func sniffStore(head []byte) int {
	switch {
	case bytes.HasPrefix(head, []byte{0xFE, 0xED, 0xFE, 0xED}):
		return storeJKS
	case bytes.HasPrefix(head, []byte{0xCE, 0xCE, 0xCE, 0xCE}):
		return storeJCEKS
	case bytes.HasPrefix(head, []byte{0x30}):
		return storePKCS12
	case bytes.Contains(head, []byte("-----BEGIN")):
		return storePEM
	}
	return storeUnknown
}

// keyStore follows DefaultSslEngineFactory.createKeystore, with Java's
// messages, and picks the librdkafka properties for the store's real format.
func (t *translator) keyStore() {
	typ := t.storeType("ssl.keystore.type")
	key, hasKey := t.get("ssl.keystore.key")
	chain, hasChain := t.get("ssl.keystore.certificate.chain")
	loc, hasLoc := t.get("ssl.keystore.location")
	pw, hasPw := t.get("ssl.keystore.password")
	keyPw, hasKeyPw := t.get("ssl.key.password")
	hasKey, hasChain, hasLoc, hasPw = hasKey && key != "", hasChain && chain != "", hasLoc && loc != "", hasPw && pw != ""
	hasKeyPw = hasKeyPw && keyPw != ""
	emitKeyPw := func() {
		if hasKeyPw {
			t.emit("ssl.key.password", "ssl.key.password", keyPw)
		}
	}
	switch {
	case hasKey:
		switch {
		case typ != "PEM":
			t.fail("ssl.keystore.key", "SSL private key can be specified only for PEM, but key store type is %s.", typ)
		case !hasChain:
			t.fail("ssl.keystore.key", "SSL private key is specified, but certificate chain is not specified.")
		case hasLoc:
			t.fail("ssl.keystore.location", "Both SSL key store location and separate private key are specified.")
		case hasPw:
			t.fail("ssl.keystore.password", "SSL key store password cannot be specified with PEM format, only key password may be specified.")
		default:
			t.emit("ssl.keystore.key", "ssl.key.pem", key)
			t.emit("ssl.keystore.certificate.chain", "ssl.certificate.pem", chain)
			emitKeyPw()
		}
	case hasChain:
		t.fail("ssl.keystore.certificate.chain", "SSL certificate chain is specified, but private key is not specified")
	case typ == "PEM" && hasLoc:
		if hasPw {
			t.fail("ssl.keystore.password", "SSL key store password cannot be specified with PEM format, only key password may be specified")
			return
		}
		// One PEM file holds both the key and its certificate chain.
		t.emit("ssl.keystore.location", "ssl.key.location", loc)
		t.emit("ssl.keystore.location", "ssl.certificate.location", loc)
		emitKeyPw()
	case !hasLoc && hasPw:
		t.fail("ssl.keystore.password", "SSL key store is not specified, but key store password is specified.")
	case hasLoc && !hasPw:
		t.fail("ssl.keystore.location", "SSL key store is specified, but key store password is not specified.")
	case hasLoc:
		if t.fileStoreType("ssl.keystore.type", typ) {
			t.fileKeyStore(loc, pw, keyPw, hasKeyPw)
		}
	case hasKeyPw:
		// A key password without a key store opens nothing, in Java too.
		t.cfg.Dropped = append(t.cfg.Dropped, "ssl.key.password")
	}
}

// fileKeyStore handles a JKS or PKCS12 key store file.
func (t *translator) fileKeyStore(loc, pw, keyPw string, hasKeyPw bool) {
	const key = "ssl.keystore.location"
	if !t.allowedFile(key, loc) {
		return
	}
	head, err := readHead(loc)
	if err != nil {
		t.fail(key, "%v", err)
		return
	}
	switch sniffStore(head) {
	case storePKCS12:
		// librdkafka opens the key with the store password only.
		if hasKeyPw && keyPw != pw {
			t.fail("ssl.key.password", "the PKCS12 key store %s has a key password different from its store password, which librdkafka cannot open; re-export it with one password, or convert it to PEM", loc)
			return
		}
		t.emit(key, "ssl.keystore.location", loc)
		t.emit("ssl.keystore.password", "ssl.keystore.password", pw)
	case storeJKS:
		// librdkafka cannot read JKS: the key and its chain are read here and handed over as PEM, as a JKS trust
		// store is. Java opens the key with ssl.key.password, or the store password without one.
		data, err := os.ReadFile(loc)
		if err != nil {
			t.fail(key, "cannot read key store: %v", err)
			return
		}
		if !hasKeyPw {
			keyPw = pw
		}
		keyPEM, chainPEM, err := jksPrivateKeyPEM(data, pw, keyPw)
		if err != nil {
			t.fail(key, "%s: %v", loc, err)
			return
		}
		t.emit(key, "ssl.key.pem", keyPEM)
		t.emit(key, "ssl.certificate.pem", chainPEM)
	case storeJCEKS:
		t.fail(key, "%s is a JCEKS key store, which librdkafka cannot read; convert it to PKCS12 with keytool -importkeystore", loc)
	case storePEM:
		t.fail(key, "%s is a PEM file; set ssl.keystore.type=PEM (and no ssl.keystore.password)", loc)
	default:
		t.fail(key, "%s is neither a PKCS12, JKS nor PEM key store", loc)
	}
}

// trustStore follows DefaultSslEngineFactory.createTruststore. librdkafka
// trusts PEM only (ssl.ca.location, ssl.ca.pem); a JKS trust store is read here
// and handed over as PEM.
func (t *translator) trustStore() {
	typ := t.storeType("ssl.truststore.type")
	certs, hasCerts := t.get("ssl.truststore.certificates")
	loc, hasLoc := t.get("ssl.truststore.location")
	pw, hasPw := t.get("ssl.truststore.password")
	hasCerts, hasLoc, hasPw = hasCerts && certs != "", hasLoc && loc != "", hasPw && pw != ""
	switch {
	case hasCerts:
		switch {
		case typ != "PEM":
			t.fail("ssl.truststore.certificates", "SSL trust store certs can be specified only for PEM, but trust store type is %s.", typ)
		case hasLoc:
			t.fail("ssl.truststore.location", "Both SSL trust store location and separate trust certificates are specified.")
		case hasPw:
			t.fail("ssl.truststore.password", "SSL trust store password cannot be specified for PEM format.")
		default:
			t.emit("ssl.truststore.certificates", "ssl.ca.pem", certs)
		}
	case typ == "PEM" && hasLoc:
		if hasPw {
			t.fail("ssl.truststore.password", "SSL trust store password cannot be specified for PEM format.")
			return
		}
		t.emit("ssl.truststore.location", "ssl.ca.location", loc)
	case !hasLoc && hasPw:
		t.fail("ssl.truststore.password", "SSL trust store is not specified, but trust store password is specified.")
	case hasLoc:
		if t.fileStoreType("ssl.truststore.type", typ) {
			t.fileTrustStore(loc, pw)
		}
	}
}

// fileTrustStore handles a JKS or PKCS12 trust store file.
func (t *translator) fileTrustStore(loc, pw string) {
	const key = "ssl.truststore.location"
	if !t.allowedFile(key, loc) {
		return
	}
	data, err := os.ReadFile(loc)
	if err != nil {
		t.fail(key, "cannot read trust store: %v", err)
		return
	}
	switch sniffStore(data) {
	case storeJKS:
		pemCerts, err := jksTrustedCertsPEM(data, pw)
		if err != nil {
			t.fail(key, "%s: %v", loc, err)
			return
		}
		t.emit(key, "ssl.ca.pem", pemCerts)
	case storePKCS12:
		t.fail(key, "%s is a PKCS12 trust store, which librdkafka cannot read; extract its certificates with "+
			"`openssl pkcs12 -in %s -nokeys -out ca.pem` and set ssl.truststore.type=PEM and ssl.truststore.location=ca.pem", loc, loc)
	case storeJCEKS:
		t.fail(key, "%s is a JCEKS trust store, which librdkafka cannot read; convert it to PEM", loc)
	case storePEM:
		t.fail(key, "%s is a PEM file; set ssl.truststore.type=PEM", loc)
	default:
		t.fail(key, "%s is neither a JKS, PKCS12 nor PEM trust store", loc)
	}
}

// storeType takes ssl.keystore.type or ssl.truststore.type, upper-cased, JKS
// by default. Like Java, the type only matters once a store is configured.
func (t *translator) storeType(key string) string {
	v, ok := t.get(key)
	if !ok || strings.TrimSpace(v) == "" {
		return "JKS"
	}
	return strings.ToUpper(strings.TrimSpace(v))
}

// fileStoreType checks the declared type of a store file: JKS and PKCS12 are
// read by content; anything else (JCEKS, BCFKS, PKCS11, ...) cannot be used.
func (t *translator) fileStoreType(key, typ string) bool {
	if typ == "JKS" || typ == "PKCS12" {
		return true
	}
	t.fail(key, "key store type %q is not supported: use PKCS12 or PEM", typ)
	return false
}

// readHead reads the first bytes of a store file, enough to tell its format.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read key store: %w", err)
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := f.Read(head)
	if n == 0 && err != nil {
		return nil, fmt.Errorf("cannot read key store %s: %w", path, err)
	}
	return head[:n], nil
}
