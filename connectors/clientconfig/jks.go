package clientconfig

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/asn1"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"unicode/utf16"
)

// jksTrustedCertsPEM reads a Java KeyStore (JKS) file as Java's trust manager
// does (every trusted-certificate entry, plus the leaf certificate of every
// private-key entry) and returns the certificates as concatenated PEM, which
// librdkafka accepts as ssl.ca.pem.
//
// The JKS layout is small: a magic number, a version, an entry count, the
// entries, and a SHA-1 digest keyed by the password. As in Java, an empty
// password skips the integrity check instead of failing it. Private keys are
// skipped without being decrypted.
func jksTrustedCertsPEM(data []byte, password string) (string, error) {
	r := &jksReader{buf: data}
	if r.u32() != 0xFEEDFEED {
		return "", errors.New("not a JKS key store")
	}
	version := r.u32()
	if r.err == nil && version != 1 && version != 2 {
		return "", fmt.Errorf("unsupported JKS version %d", version)
	}
	count := r.u32()
	var out bytes.Buffer
	addCert := func(certType string, der []byte) {
		if certType == "X.509" && len(der) > 0 {
			_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: der})
		}
	}
	for i := uint32(0); i < count && r.err == nil; i++ {
		tag := r.u32()
		r.utf()   // alias
		r.skip(8) // creation date
		switch tag {
		case 1: // private key entry: key, then its certificate chain
			r.skip(int(r.u32()))
			n := r.u32()
			for j := uint32(0); j < n && r.err == nil; j++ {
				certType, der := r.cert(version)
				if j == 0 {
					addCert(certType, der)
				}
			}
		case 2: // trusted certificate entry
			addCert(r.cert(version))
		default:
			if r.err == nil {
				return "", fmt.Errorf("unrecognized JKS entry type %d", tag)
			}
		}
	}
	if r.err != nil {
		return "", fmt.Errorf("malformed JKS key store: %w", r.err)
	}
	if password != "" {
		body := data[:r.pos]
		want := r.bytes(sha1.Size)
		if r.err != nil {
			return "", errors.New("malformed JKS key store: digest missing")
		}
		if subtle.ConstantTimeCompare(jksDigest(password, body), want) != 1 {
			// Java's own wording.
			return "", errors.New("Keystore was tampered with, or password was incorrect")
		}
	}
	if out.Len() == 0 {
		return "", errors.New("At least one certificate expected, but none found")
	}
	return out.String(), nil
}

// jksDigest is the JKS integrity digest: SHA-1 over the password as UTF-16
// big-endian bytes, the phrase "Mighty Aphrodite", and the store body.
func jksDigest(password string, body []byte) []byte {
	h := sha1.New()
	for _, c := range utf16.Encode([]rune(password)) {
		h.Write([]byte{byte(c >> 8), byte(c)})
	}
	h.Write([]byte("Mighty Aphrodite"))
	h.Write(body)
	return h.Sum(nil)
}

// jksReader reads big-endian fields; the first error sticks and later reads
// return zero values.
type jksReader struct {
	buf []byte
	pos int
	err error
}

func (r *jksReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf)-r.pos {
		r.err = errors.New("truncated")
		return nil
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b
}

func (r *jksReader) skip(n int) { r.bytes(n) }

func (r *jksReader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

// utf reads a Java DataInput UTF string: a 16-bit length and modified UTF-8,
// which equals UTF-8 for the certificate type names compared here.
func (r *jksReader) utf() string {
	b := r.bytes(2)
	if b == nil {
		return ""
	}
	return string(r.bytes(int(binary.BigEndian.Uint16(b))))
}

// cert reads one certificate; version 1 stores have no type and hold X.509.
func (r *jksReader) cert(version uint32) (certType string, der []byte) {
	certType = "X.509"
	if version == 2 {
		certType = r.utf()
	}
	return certType, r.bytes(int(r.u32()))
}

// jksKeyProtectorOID is Sun's proprietary key protection (sun.security.provider.KeyProtector), the one JKS
// private-key entries use.
var jksKeyProtectorOID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 42, 2, 17, 1, 1}

// jksPrivateKeyPEM reads the private-key entry of a JKS key store, as Java's key manager would use it for
// client authentication, and returns the key (PKCS#8) and its certificate chain as PEM, which librdkafka takes
// as ssl.key.pem and ssl.certificate.pem: librdkafka cannot read JKS, and converting the file is then not the
// operator's chore. keyPassword opens the key (Java: ssl.key.password, else the store password).
func jksPrivateKeyPEM(data []byte, storePassword, keyPassword string) (keyPEM, chainPEM string, err error) {
	r := &jksReader{buf: data}
	if r.u32() != 0xFEEDFEED {
		return "", "", errors.New("not a JKS key store")
	}
	version := r.u32()
	if r.err == nil && version != 1 && version != 2 {
		return "", "", fmt.Errorf("unsupported JKS version %d", version)
	}
	count := r.u32()
	var protected []byte
	var chain bytes.Buffer
	keys := 0
	for i := uint32(0); i < count && r.err == nil; i++ {
		tag := r.u32()
		r.utf()   // alias
		r.skip(8) // creation date
		switch tag {
		case 1:
			keys++
			p := r.bytes(int(r.u32()))
			n := r.u32()
			for j := uint32(0); j < n && r.err == nil; j++ {
				certType, der := r.cert(version)
				if keys == 1 && certType == "X.509" {
					_ = pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: der})
				}
			}
			if keys == 1 {
				protected = p
			}
		case 2:
			r.cert(version)
		default:
			if r.err == nil {
				return "", "", fmt.Errorf("unrecognized JKS entry type %d", tag)
			}
		}
	}
	if r.err != nil {
		return "", "", fmt.Errorf("malformed JKS key store: %w", r.err)
	}
	body := data[:r.pos]
	want := r.bytes(sha1.Size)
	if r.err != nil {
		return "", "", errors.New("malformed JKS key store: digest missing")
	}
	if subtle.ConstantTimeCompare(jksDigest(storePassword, body), want) != 1 {
		return "", "", errors.New("Keystore was tampered with, or password was incorrect")
	}
	switch {
	case keys == 0:
		return "", "", errors.New("the key store holds no private key")
	case keys > 1:
		// Java's key manager chooses among several keys by algorithm and issuer per handshake; librdkafka
		// takes one key, so picking one here could authenticate as someone else than meant.
		return "", "", fmt.Errorf("the key store holds %d private keys; librdkafka uses one: keep only the client's", keys)
	case chain.Len() == 0:
		return "", "", errors.New("the key store's private key has no certificate")
	}
	der, err := jksRecoverKey(protected, keyPassword)
	if err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), chain.String(), nil
}

// jksRecoverKey undoes Sun's key protection: the key is XORed with a SHA-1 chain over the password (UTF-16
// big-endian) seeded by a 20-byte salt, and followed by SHA-1(password, key) to check the password.
func jksRecoverKey(protected []byte, password string) ([]byte, error) {
	var info struct {
		Algorithm struct {
			OID    asn1.ObjectIdentifier
			Params asn1.RawValue `asn1:"optional"`
		}
		Data []byte
	}
	if rest, err := asn1.Unmarshal(protected, &info); err != nil || len(rest) > 0 {
		return nil, errors.New("malformed JKS key entry")
	}
	if !info.Algorithm.OID.Equal(jksKeyProtectorOID) {
		return nil, fmt.Errorf("the key is protected with %v, not JKS's own scheme; convert the store to PKCS12", info.Algorithm.OID)
	}
	if len(info.Data) < 2*sha1.Size {
		return nil, errors.New("malformed JKS key entry")
	}
	pw := make([]byte, 0, 2*len(password))
	for _, c := range utf16.Encode([]rune(password)) {
		pw = append(pw, byte(c>>8), byte(c))
	}
	salt, enc, check := info.Data[:sha1.Size], info.Data[sha1.Size:len(info.Data)-sha1.Size], info.Data[len(info.Data)-sha1.Size:]
	key := make([]byte, len(enc))
	digest := salt
	for off := 0; off < len(enc); off += sha1.Size {
		h := sha1.New()
		h.Write(pw)
		h.Write(digest)
		digest = h.Sum(nil)
		for i := 0; i < sha1.Size && off+i < len(enc); i++ {
			key[off+i] = enc[off+i] ^ digest[i]
		}
	}
	h := sha1.New()
	h.Write(pw)
	h.Write(key)
	if subtle.ConstantTimeCompare(h.Sum(nil), check) != 1 {
		return nil, errors.New("Cannot recover key: the key password is wrong (ssl.key.password, or the key store password when it is not set)")
	}
	return key, nil
}
