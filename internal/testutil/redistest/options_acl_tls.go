package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// security is what WithACL and WithTLS configure.
type security struct {
	users []string // ACL rules lines after "user " (name first)
	acl   bool
	tls   bool

	adminPassword string // the default user's password when acl is set
	aclFile       string
	caFile        string // PEM of the test CA that signed the server certificate
	certFile      string
	keyFile       string
}

// WithACL turns on ACL users: each entry is one ACL rule line without its leading "user"
// (name first), e.g. "homeindexd on >secret resetkeys ~homeindex:* -@all +get". The lines go to
// an ACL file (--aclfile), so rules with spaces and selectors work as they would in production.
// The default user gets a random password (AdminPassword) and full access; Client logs in with
// it.
func WithACL(users ...string) Option {
	return func(c *config) {
		c.sec.acl = true
		c.sec.users = append(c.sec.users, users...)
	}
}

// WithTLS makes the server speak TLS only (--port 0, --tls-port on the port Addr names) with a
// certificate for 127.0.0.1 signed by a CA made for the test (ECDSA P-256; CAFile), without
// client certificates (--tls-auth-clients no). Client trusts that CA.
func WithTLS() Option { return func(c *config) { c.sec.tls = true } }

// prepareSecurity writes the ACL file and the TLS material into the server's directory.
func (s *Server) prepareSecurity() error {
	sec := &s.cfg.sec
	if sec.acl {
		pw := make([]byte, 16)
		if _, err := rand.Read(pw); err != nil {
			return err
		}
		sec.adminPassword = hex.EncodeToString(pw)
		lines := []string{"user default on >" + sec.adminPassword + " ~* &* +@all"}
		for _, u := range sec.users {
			lines = append(lines, "user "+u)
		}
		sec.aclFile = filepath.Join(s.dir, "users.acl")
		if err := os.WriteFile(sec.aclFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			return err
		}
	}
	if sec.tls {
		var err error
		if sec.caFile, sec.certFile, sec.keyFile, err = writeTestCerts(s.dir); err != nil {
			return fmt.Errorf("tls certificates: %w", err)
		}
	}
	return nil
}

// securityArgs are the redis-server arguments for ACL and TLS (after the plain ones: a later
// --port wins).
func (s *Server) securityArgs() []string {
	sec := s.cfg.sec
	var a []string
	if sec.acl {
		a = append(a, "--aclfile", sec.aclFile)
	}
	if sec.tls {
		a = append(a, "--port", "0", "--tls-port", fmt.Sprint(s.port),
			"--tls-cert-file", sec.certFile, "--tls-key-file", sec.keyFile,
			"--tls-ca-cert-file", sec.caFile, "--tls-auth-clients", "no")
	}
	return a
}

// clientOptions are go-redis options reaching the server as the default user (with its
// password and the test CA when set).
func (s *Server) clientOptions() *redis.Options {
	o := &redis.Options{Addr: s.Addr(), MaxRetries: -1}
	if s.cfg.sec.acl {
		o.Username, o.Password = "default", s.cfg.sec.adminPassword
	}
	if s.cfg.sec.tls {
		o.TLSConfig = s.TLSConfig()
		// go-redis cannot tell a TLS connection the server closed (Kill, Restart) before it
		// uses it: one retry replaces it instead of failing the command. Replies (NOPERM,
		// WRONGPASS) are never retried.
		o.MaxRetries = 1
	}
	return o
}

// AdminPassword is the default user's password with WithACL ("" without).
func (s *Server) AdminPassword() string { return s.cfg.sec.adminPassword }

// CAFile is the PEM file of the CA that signed the server's certificate, for
// REDIS_TLS_CA_FILE ("" without WithTLS).
func (s *Server) CAFile() string { return s.cfg.sec.caFile }

// TLSConfig trusts the test CA (nil without WithTLS).
func (s *Server) TLSConfig() *tls.Config {
	if !s.cfg.sec.tls {
		return nil
	}
	pem, err := os.ReadFile(s.cfg.sec.caFile)
	if err != nil {
		s.tb.Fatalf("redistest: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: "127.0.0.1"}
}

// URL is a REDIS_HOST value reaching the server as user with password: redis:// or, with
// WithTLS, rediss://; user and password "" give no user info.
func (s *Server) URL(user, password string) string {
	scheme := "redis"
	if s.cfg.sec.tls {
		scheme = "rediss"
	}
	u := url.URL{Scheme: scheme, Host: s.Addr()}
	if user != "" || password != "" {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}

// ClientAs returns a client logged in as user (TLS as configured), closed at cleanup. A
// NOPERM or WRONGPASS reply comes back as it is.
func (s *Server) ClientAs(user, password string) *redis.Client {
	o := s.clientOptions()
	o.Username, o.Password = user, password
	c := redis.NewClient(o)
	s.tb.Cleanup(func() { _ = c.Close() })
	return c
}

// writeTestCerts makes a CA and a server certificate for 127.0.0.1 and localhost (ECDSA
// P-256, valid for a day) and writes ca.crt, server.crt and server.key (PKCS#8) into dir.
func writeTestCerts(dir string) (caFile, certFile, keyFile string, err error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "redistest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", "", "", err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return "", "", "", err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return "", "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return "", "", "", err
	}
	caFile, certFile, keyFile = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{{caFile, "CERTIFICATE", caDER}, {certFile, "CERTIFICATE", srvDER}, {keyFile, "PRIVATE KEY", keyDER}} {
		b := pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der})
		if err := os.WriteFile(f.path, b, 0o600); err != nil {
			return "", "", "", err
		}
	}
	return caFile, certFile, keyFile, nil
}
