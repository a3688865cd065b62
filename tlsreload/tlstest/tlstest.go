// Package tlstest makes certificate authorities and certificates for tests, with crypto/x509, so that no
// private key is ever committed to the repository.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// CA is a certificate authority made for one test.
type CA struct {
	t    *testing.T
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate in PEM, for --tls-client-ca, curl --cacert, or a client's RootCAs.
	File string
}

// NewCA makes a CA named name.
func NewCA(t *testing.T, name string) *CA {
	t.Helper()
	key, der, cert := certify(t, name, &x509.Certificate{
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil)
	ca := &CA{t: t, Cert: cert, key: key, File: filepath.Join(t.TempDir(), "ca.pem")}
	writePEM(t, ca.File, "CERTIFICATE", der)
	return ca
}

// Pool is a pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Pair is a certificate and its key, as PEM files and as a tls.Certificate.
type Pair struct {
	CertFile, KeyFile string
	TLS               tls.Certificate
	Leaf              *x509.Certificate
}

// Server issues a server certificate for localhost and 127.0.0.1 (and ::1), with commonName as subject.
func (ca *CA) Server(commonName string) Pair {
	return ca.issue(commonName, x509.ExtKeyUsageServerAuth)
}

// Client issues a client certificate with commonName as subject.
func (ca *CA) Client(commonName string) Pair {
	return ca.issue(commonName, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(commonName string, usage x509.ExtKeyUsage) Pair {
	t := ca.t
	t.Helper()
	tmpl := &x509.Certificate{
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	key, der, leaf := certify(t, commonName, tmpl, ca)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	p := Pair{CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem")}
	writePEM(t, p.CertFile, "CERTIFICATE", der)
	writePEM(t, p.KeyFile, "PRIVATE KEY", keyDER)
	p.TLS, err = tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
	require.NoError(t, err)
	p.Leaf = leaf
	return p
}

// certify makes a new key and a day's certificate of tmpl for it, with commonName as subject, signed by issuer
// (self-signed when issuer is nil). It returns the key, the certificate's DER and the certificate.
func certify(t *testing.T, commonName string, tmpl *x509.Certificate, issuer *CA) (*ecdsa.PrivateKey, []byte, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl.SerialNumber = serial(t)
	tmpl.Subject = pkix.Name{CommonName: commonName}
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	parent, parentKey := tmpl, key
	if issuer != nil {
		parent, parentKey = issuer.Cert, issuer.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return key, der, cert
}

// Install copies the pair's files over certFile and keyFile, each by a rename, as a rotation does.
func (p Pair) Install(t *testing.T, certFile, keyFile string) {
	t.Helper()
	for src, dst := range map[string]string{p.CertFile: certFile, p.KeyFile: keyFile} {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst+".new", b, 0o600))
		require.NoError(t, os.Rename(dst+".new", dst))
	}
}

func serial(t *testing.T) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	require.NoError(t, err)
	return n
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
}
