package heatapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// tlsConf is a client's TLS configuration and, for messages, what it
// trusts.
type tlsConf struct {
	config *tls.Config // nil: Go's defaults
	// caPath is the CA file the module's ca_cert gave ("" when none).
	caPath string
	// hint names the CAs certificates are checked against ("ca_cert
	// FILE", "OS_CACERT FILE", "the cacert FILE of cloud ..."), "" when
	// they are not checked.
	hint string
}

const systemCAs = "the system's CA certificates"

// expandHome expands a leading "~/" as gophercloud does for cacert.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, rest)
		}
	}
	return p
}

// readCAs reads a PEM file of CA certificates through the bounded reader.
func readCAs(path, what string) (*x509.CertPool, error) {
	data, err := fsutil.ReadInput(path, certLimit, what)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s %s holds no PEM certificate: give the file of the CA certificate(s), -----BEGIN CERTIFICATE----- blocks", what, path)
	}
	return pool, nil
}

// endpointTLS is the TLS of a no-auth endpoint given with the module:
// its ca_cert and validate_certs alone.
func endpointTLS(o TLSOptions) (*tlsConf, error) {
	tc := &tlsConf{hint: systemCAs}
	if o.CACert != "" {
		pool, err := readCAs(o.CACert, "ca_cert")
		if err != nil {
			return nil, err
		}
		tc.config, tc.caPath, tc.hint = &tls.Config{RootCAs: pool}, o.CACert, "ca_cert "+o.CACert
	}
	if o.Verify != nil && !*o.Verify {
		if tc.config == nil {
			tc.config = &tls.Config{}
		}
		tc.config.InsecureSkipVerify, tc.hint = true, ""
	}
	return tc, nil
}

// loadTLS checks, before gophercloud reads them, the CA, certificate and
// key files a cloud's TLS uses, in gophercloud's order (the module's
// ca_cert, else OS_CACERT, else the cloud's cacert; OS_CERT/OS_KEY, else
// its cert/key): each must be a regular file within certLimit, the CA
// file must hold a PEM certificate. Errors name where the file came from.
func loadTLS(o TLSOptions, entry clouds.Cloud, where string) (*tlsConf, error) {
	tc := &tlsConf{hint: systemCAs}
	ca, what, in := o.CACert, "ca_cert", ""
	switch {
	case ca != "":
		tc.caPath = ca
	case os.Getenv("OS_CACERT") != "":
		ca, what = os.Getenv("OS_CACERT"), "OS_CACERT"
	case entry.CACertFile != "":
		ca, what, in = expandHome(entry.CACertFile), "cacert", where
	}
	if ca != "" {
		if _, err := readCAs(ca, what); err != nil {
			return nil, inCloud(in, err)
		}
		tc.hint = what + " " + ca
		if in != "" {
			tc.hint += " of " + in
		}
	}
	for _, f := range []struct{ env, file, what string }{
		{"OS_CERT", entry.ClientCertFile, "client certificate (cert)"},
		{"OS_KEY", entry.ClientKeyFile, "client key (key)"},
	} {
		p, w, in := os.Getenv(f.env), f.env, ""
		if p == "" {
			p, w, in = expandHome(f.file), f.what, where
		}
		if p == "" {
			continue
		}
		if _, err := fsutil.ReadInput(p, certLimit, w); err != nil {
			return nil, inCloud(in, err)
		}
	}
	verify := entry.Verify == nil || *entry.Verify
	if o.Verify != nil {
		verify = *o.Verify
	}
	if !verify {
		tc.hint = ""
	}
	return tc, nil
}

// inCloud prefixes err with the cloud a file came from ("" for none).
func inCloud(where string, err error) error {
	if where == "" {
		return err
	}
	return fmt.Errorf("%s: %w", where, err)
}

// httpClient does not follow redirects: FindStack reads the Location of
// Heat's 302 itself, and no mutation is ever sent to a redirecting URL.
// cfg, when not nil, is its TLS configuration.
func httpClient(cfg *tls.Config) http.Client {
	c := http.Client{
		Timeout:       RequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if cfg != nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = cfg
		c.Transport = t
	}
	return c
}

// explainTLS adds to a TLS error what to do: a certificate the client does
// not trust names the CAs it was checked against (hint) and the options
// that change them; a plain-HTTP server at an https URL says so.
func explainTLS(err error, hint string) error {
	var (
		cve *tls.CertificateVerificationError
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		ci  x509.CertificateInvalidError
		rh  tls.RecordHeaderError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &cve), errors.As(err, &ua), errors.As(err, &he), errors.As(err, &ci):
		if hint == "" {
			hint = systemCAs
		}
		return fmt.Errorf("%w; the server's TLS certificate was checked against %s: give ca_cert, the PEM file of the CA "+
			"that signed it (or set the cloud's cacert), or validate_certs: false to skip the check", err, hint)
	case errors.As(err, &rh), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("%w; the server does not speak TLS there: is the URL http://, not https://?", err)
	}
	return err
}
