package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// selfSignedHint says how to make a certificate for a test or a private
// hub, for the errors about --tls-cert and --tls-key.
const selfSignedHint = `for a private hub, a self-signed pair will do (fsplane connect trusts it with --ca-file cert.pem):
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
    -keyout key.pem -out cert.pem -subj /CN=hub.example -addext subjectAltName=DNS:hub.example`

// serverTLS loads the certificate and key that fsplane serve answers
// HTTPS with. certSrc and keySrc name where the paths came from
// ("--tls-cert", or a variable), for the errors. Each error names the
// file at fault and says what to do: the server must fail at start,
// not at a client's first handshake, when the pair is wrong.
//
// The configuration offers HTTP/1.1 only (see serve), with TLS 1.2 at
// least, as fsplane connect requires.
func serverTLS(certSrc, certFile, keySrc, keyFile string) (*tls.Config, *x509.Certificate, error) {
	certPEM, err := readPEMFile(certSrc, certFile, "the PEM file of the server's certificate (then any intermediates)")
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := readPEMFile(keySrc, keyFile, "the PEM file of the certificate's private key")
	if err != nil {
		return nil, nil, err
	}
	leaf, err := firstCertificate(certPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("the %s file %s %v\nHint: %s takes a PEM certificate (-----BEGIN CERTIFICATE-----) and %s its private key; %s",
			certSrc, certFile, err, certSrc, keySrc, selfSignedHint)
	}
	if err := checkPrivateKey(keyPEM); err != nil {
		hint := keySrc + " takes the PEM file of the certificate's private key (PKCS #8, PKCS #1 or SEC 1), unencrypted"
		if errors.Is(err, errEncryptedKey) {
			hint = "fsplane cannot ask for a passphrase; decrypt the key into a file only the server's account can read: openssl pkey -in " + keyFile + " -out key.pem"
		}
		return nil, nil, fmt.Errorf("the %s file %s %v\nHint: %s", keySrc, keyFile, err, hint)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("the %s file %s does not fit the certificate in the %s file %s (%v)\nHint: pass the private key the certificate was issued for, or the certificate issued for this key",
			keySrc, keyFile, certSrc, certFile, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		MinVersion:   tls.VersionTLS12,
	}, leaf, nil
}

// readPEMFile reads a file named by a flag; what says what the flag
// takes, for the hint.
func readPEMFile(src, name, what string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read the %s file %s: %v\nHint: %s takes %s", src, name, err, src, what)
	}
	return b, nil
}

// firstCertificate returns the first certificate of a PEM file (the
// server's own; intermediates follow it), or an error that completes
// "the --tls-cert file NAME …".
func firstCertificate(b []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		if block, b = pem.Decode(b); block == nil {
			return nil, errors.New("holds no PEM certificate")
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("holds a certificate that cannot be parsed: %v", err)
		}
		return c, nil
	}
}

// errEncryptedKey is checkPrivateKey's error for a key under a
// passphrase.
var errEncryptedKey = errors.New("holds an encrypted private key")

// checkPrivateKey reports whether a PEM file holds a private key
// crypto/tls can use, with an error that completes "the --tls-key file
// NAME …". tls.X509KeyPair would say the same less clearly, and could
// not tell a key it cannot read from a key that does not match.
func checkPrivateKey(b []byte) error {
	for {
		var block *pem.Block
		if block, b = pem.Decode(b); block == nil {
			return errors.New("holds no PEM private key")
		}
		if !strings.HasSuffix(block.Type, "PRIVATE KEY") {
			continue
		}
		if block.Type == "ENCRYPTED PRIVATE KEY" || block.Headers["Proc-Type"] != "" {
			return errEncryptedKey
		}
		if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
			return nil
		}
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
			return nil
		}
		if _, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
			return nil
		}
		return fmt.Errorf("holds a %s block that is not a private key crypto/tls can use", block.Type)
	}
}
