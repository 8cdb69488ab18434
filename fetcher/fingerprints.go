package fetcher

import (
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	"github.com/bogdanfinn/fhttp/http2"
	tlsprofiles "github.com/bogdanfinn/tls-client/profiles"
	utls "github.com/bogdanfinn/utls"
	dicttls "github.com/bogdanfinn/utls/dicttls"
)

// Names of the TLS fingerprints a Profile may carry.
const (
	// TLSChrome156 is Chrome/Chromium 156's ClientHello and HTTP/2
	// settings, captured from Debian's chromium 156.0.8078.114.
	TLSChrome156 = "chrome-156"
	// TLSFirefox153 is Firefox 153's, captured from Debian's firefox-esr
	// 153.8.0esr.
	TLSFirefox153 = "firefox-153"
	// TLSGo is Go's own crypto/tls and net/http: what crawlq sent before
	// it impersonated browsers. No browser sends it; sites that check
	// fingerprints refuse it.
	TLSGo = "go"
)

// Fingerprint is how one browser build speaks TLS and HTTP/2: its
// ClientHello (tls-client's ClientProfile, built on uTLS) and the header
// order of its top-level page loads.
type Fingerprint struct {
	// Name is the fingerprint's name (TLSChrome156, ...).
	Name string
	// Client is the ClientHello and HTTP/2 SETTINGS, WINDOW_UPDATE,
	// priorities and pseudo-header order.
	Client tlsprofiles.ClientProfile
	// ShuffleExtensions permutes the extensions per connection, as Chrome
	// does since version 110.
	ShuffleExtensions bool
	// HeaderOrder is the order of regular headers, lower case.
	HeaderOrder []string
}

// fingerprints are the built-in fingerprints by name.
var fingerprints = map[string]*Fingerprint{
	TLSChrome156:  chrome156(),
	TLSFirefox153: firefox153(),
}

// FingerprintByName returns the built-in fingerprint called name; TLSGo
// and unknown names have none.
func FingerprintByName(name string) (*Fingerprint, bool) {
	fp, ok := fingerprints[name]
	return fp, ok
}

// FingerprintNames lists the built-in fingerprints, sorted.
func FingerprintNames() []string {
	names := make([]string, 0, len(fingerprints))
	for n := range fingerprints {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RegisterFingerprint adds or replaces a fingerprint; call it at start-up,
// before any request, to ship a profile of a newer browser.
func RegisterFingerprint(fp *Fingerprint) error {
	if fp == nil || fp.Name == "" || fp.Name == TLSGo {
		return fmt.Errorf("fingerprint needs a name other than %q", TLSGo)
	}
	if _, err := fp.Client.GetClientHelloSpec(); err != nil {
		return fmt.Errorf("fingerprint %s: %w", fp.Name, err)
	}
	fingerprints[fp.Name] = fp
	return nil
}

// chromeTrustAnchors is the body of Chrome 156's TLS trust anchor IDs
// extension (0xca34), as captured: uTLS has no type for it yet.
var chromeTrustAnchors = mustHex("00b80582df1302010582df1302060582df13020d0582df13020e0582df13020f0582df1302120582df1302130582df13021408839a648c9b2d010708839a648c9b2d010808839a648c9b2d010908839a648c9b2d010a08839a648c9b2d010b08839a648c9b2d010c08839a648c9b2d010d08839a648c9b2d011208839a648c9b2d011304d679090104d679090404d679090504d679090604d679090704d679090804d679090a04d679090b04d679090c04d679090d04d679090f")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// chrome156 is Chromium 156: 15 ciphers and 17 extensions besides
// GREASE, ML-DSA signature schemes first, X25519MLKEM768 key share, trust
// anchor IDs, ALPS (new codepoint) for h2, GREASE ECH; extensions shuffled
// per connection. Through a proxy Chrome offers h2 and http/1.1 (no h3).
func chrome156() *Fingerprint {
	id := utls.ClientHelloID{Client: "Chrome", Version: "156", SpecFactory: chrome156Spec}
	return &Fingerprint{
		Name: TLSChrome156,
		Client: tlsprofiles.NewClientProfile(id,
			map[http2.SettingID]uint32{
				http2.SettingHeaderTableSize:   65536,
				http2.SettingEnablePush:        0,
				http2.SettingInitialWindowSize: 6291456,
				http2.SettingMaxHeaderListSize: 262144,
			},
			[]http2.SettingID{http2.SettingHeaderTableSize, http2.SettingEnablePush,
				http2.SettingInitialWindowSize, http2.SettingMaxHeaderListSize},
			[]string{":method", ":authority", ":scheme", ":path"},
			15663105, nil,
			&http2.PriorityParam{Weight: 255, Exclusive: true, StreamDep: 0}),
		ShuffleExtensions: true,
		HeaderOrder: []string{
			"cache-control", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "upgrade-insecure-requests",
			"user-agent", "accept", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-user", "sec-fetch-dest",
			"referer", "accept-encoding", "accept-language", "cookie", "priority",
		},
	}
}

// chrome156Spec is Chromium 156's ClientHello, built anew for each connection.
func chrome156Spec() (utls.ClientHelloSpec, error) {
	return utls.ClientHelloSpec{
		CipherSuites: []uint16{
			utls.GREASE_PLACEHOLDER,
			utls.TLS_AES_128_GCM_SHA256, utls.TLS_AES_256_GCM_SHA384, utls.TLS_CHACHA20_POLY1305_SHA256,
			utls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, utls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			utls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, utls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			utls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, utls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
			utls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, utls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
			utls.TLS_RSA_WITH_AES_128_GCM_SHA256, utls.TLS_RSA_WITH_AES_256_GCM_SHA384,
			utls.TLS_RSA_WITH_AES_128_CBC_SHA, utls.TLS_RSA_WITH_AES_256_CBC_SHA,
		},
		CompressionMethods: []byte{utls.CompressionNone},
		Extensions:         chrome156Extensions(),
	}, nil
}

// chrome156Extensions are Chromium 156's ClientHello extensions in its order,
// new values for each connection.
func chrome156Extensions() []utls.TLSExtension {
	return []utls.TLSExtension{
		&utls.UtlsGREASEExtension{},
		&utls.SNIExtension{},
		utls.BoringGREASEECH(),
		&utls.UtlsCompressCertExtension{Algorithms: []utls.CertCompressionAlgo{utls.CertCompressionBrotli}},
		&utls.SignatureAlgorithmsExtension{SupportedSignatureAlgorithms: []utls.SignatureScheme{
			0x0904, 0x0905, 0x0906, // ML-DSA-44, -65, -87
			utls.ECDSAWithP256AndSHA256, utls.PSSWithSHA256, utls.PKCS1WithSHA256,
			utls.ECDSAWithP384AndSHA384, utls.PSSWithSHA384, utls.PKCS1WithSHA384,
			utls.PSSWithSHA512, utls.PKCS1WithSHA512,
		}},
		&utls.GenericExtension{Id: 0xca34, Data: chromeTrustAnchors},
		&utls.ALPNExtension{AlpnProtocols: []string{"h2", "http/1.1"}},
		&utls.PSKKeyExchangeModesExtension{Modes: []uint8{utls.PskModeDHE}},
		&utls.StatusRequestExtension{},
		&utls.SupportedVersionsExtension{Versions: []uint16{utls.GREASE_PLACEHOLDER, utls.VersionTLS13, utls.VersionTLS12}},
		&utls.RenegotiationInfoExtension{Renegotiation: utls.RenegotiateOnceAsClient},
		&utls.ExtendedMasterSecretExtension{},
		&utls.ApplicationSettingsExtensionNew{SupportedProtocols: []string{"h2"}},
		&utls.SCTExtension{},
		&utls.SupportedCurvesExtension{Curves: []utls.CurveID{
			utls.GREASE_PLACEHOLDER, utls.X25519MLKEM768, utls.X25519, utls.CurveP256, utls.CurveP384,
		}},
		&utls.KeyShareExtension{KeyShares: []utls.KeyShare{
			{Group: utls.CurveID(utls.GREASE_PLACEHOLDER), Data: []byte{0}},
			{Group: utls.X25519MLKEM768},
			{Group: utls.X25519},
		}},
		&utls.SupportedPointsExtension{SupportedPoints: []byte{utls.PointFormatUncompressed}},
		&utls.SessionTicketExtension{},
		&utls.UtlsGREASEExtension{},
	}
}

// firefox153 is Firefox 153: 16 ciphers, 17 extensions in a fixed order,
// no GREASE, X25519MLKEM768 + X25519 + P-256 key shares, delegated
// credentials, record size limit, GREASE ECH.
func firefox153() *Fingerprint {
	id := utls.ClientHelloID{Client: "Firefox", Version: "153", SpecFactory: firefox153Spec}
	return &Fingerprint{
		Name: TLSFirefox153,
		Client: tlsprofiles.NewClientProfile(id,
			map[http2.SettingID]uint32{
				http2.SettingHeaderTableSize:   65536,
				http2.SettingEnablePush:        0,
				http2.SettingInitialWindowSize: 131072,
				http2.SettingMaxFrameSize:      16384,
			},
			[]http2.SettingID{http2.SettingHeaderTableSize, http2.SettingEnablePush,
				http2.SettingInitialWindowSize, http2.SettingMaxFrameSize},
			[]string{":method", ":path", ":authority", ":scheme"},
			12517377, nil, nil),
		HeaderOrder: []string{
			"user-agent", "accept", "accept-language", "accept-encoding", "referer", "cookie",
			"upgrade-insecure-requests", "sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-user",
			"priority", "te",
		},
	}
}

// firefox153Spec is Firefox 153's ClientHello, built anew for each connection.
func firefox153Spec() (utls.ClientHelloSpec, error) {
	return utls.ClientHelloSpec{
		CipherSuites: []uint16{
			utls.TLS_AES_128_GCM_SHA256, utls.TLS_CHACHA20_POLY1305_SHA256, utls.TLS_AES_256_GCM_SHA384,
			utls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, utls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			utls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, utls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
			utls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, utls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			utls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
			utls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, utls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
			utls.TLS_RSA_WITH_AES_128_GCM_SHA256, utls.TLS_RSA_WITH_AES_256_GCM_SHA384,
			utls.TLS_RSA_WITH_AES_128_CBC_SHA, utls.TLS_RSA_WITH_AES_256_CBC_SHA,
		},
		CompressionMethods: []byte{utls.CompressionNone},
		Extensions:         firefox153Extensions(),
	}, nil
}

// firefox153Extensions are Firefox 153's ClientHello extensions in its order,
// new values for each connection.
func firefox153Extensions() []utls.TLSExtension {
	return []utls.TLSExtension{
		&utls.SNIExtension{},
		&utls.ExtendedMasterSecretExtension{},
		&utls.RenegotiationInfoExtension{Renegotiation: utls.RenegotiateOnceAsClient},
		&utls.SupportedCurvesExtension{Curves: []utls.CurveID{
			utls.X25519MLKEM768, utls.X25519, utls.CurveP256, utls.CurveP384, utls.CurveP521,
			utls.FAKEFFDHE2048, utls.FAKEFFDHE3072,
		}},
		&utls.SupportedPointsExtension{SupportedPoints: []byte{utls.PointFormatUncompressed}},
		&utls.SessionTicketExtension{},
		&utls.ALPNExtension{AlpnProtocols: []string{"h2", "http/1.1"}},
		&utls.StatusRequestExtension{},
		&utls.DelegatedCredentialsExtension{SupportedSignatureAlgorithms: []utls.SignatureScheme{
			utls.ECDSAWithP256AndSHA256, utls.ECDSAWithP384AndSHA384, utls.ECDSAWithP521AndSHA512, utls.ECDSAWithSHA1,
		}},
		&utls.SCTExtension{},
		&utls.KeyShareExtension{KeyShares: []utls.KeyShare{
			{Group: utls.X25519MLKEM768}, {Group: utls.X25519}, {Group: utls.CurveP256},
		}},
		&utls.SupportedVersionsExtension{Versions: []uint16{utls.VersionTLS13, utls.VersionTLS12}},
		&utls.SignatureAlgorithmsExtension{SupportedSignatureAlgorithms: []utls.SignatureScheme{
			utls.ECDSAWithP256AndSHA256, utls.ECDSAWithP384AndSHA384, utls.ECDSAWithP521AndSHA512,
			utls.PSSWithSHA256, utls.PSSWithSHA384, utls.PSSWithSHA512,
			utls.PKCS1WithSHA256, utls.PKCS1WithSHA384, utls.PKCS1WithSHA512,
			utls.ECDSAWithSHA1, utls.PKCS1WithSHA1,
		}},
		&utls.PSKKeyExchangeModesExtension{Modes: []uint8{utls.PskModeDHE}},
		&utls.FakeRecordSizeLimitExtension{Limit: 0x4001},
		&utls.UtlsCompressCertExtension{Algorithms: []utls.CertCompressionAlgo{
			utls.CertCompressionZlib, utls.CertCompressionBrotli, utls.CertCompressionZstd,
		}},
		firefoxGREASEECH(),
	}
}

// firefoxGREASEECH is Firefox's GREASE ECH extension: its three AEADs
// over HKDF-SHA256 and a 223-byte payload.
func firefoxGREASEECH() *utls.GREASEEncryptedClientHelloExtension {
	return &utls.GREASEEncryptedClientHelloExtension{
		CandidateCipherSuites: []utls.HPKESymmetricCipherSuite{
			{KdfId: dicttls.HKDF_SHA256, AeadId: dicttls.AEAD_AES_128_GCM},
			{KdfId: dicttls.HKDF_SHA256, AeadId: dicttls.AEAD_AES_256_GCM},
			{KdfId: dicttls.HKDF_SHA256, AeadId: dicttls.AEAD_CHACHA20_POLY1305},
		},
		CandidatePayloadLens: []uint16{223},
	}
}

// settingsString is fp's SETTINGS in wire order as "id:value;...".
func (fp *Fingerprint) settingsString() string {
	s := ""
	for i, id := range fp.Client.GetSettingsOrder() {
		if i > 0 {
			s += ";"
		}
		s += fmt.Sprintf("%d:%d", id, fp.Client.GetSettings()[id])
	}
	return s
}

// H2 is fp's HTTP/2 fingerprint in Akamai's form:
// SETTINGS|WINDOW_UPDATE|PRIORITY frames|pseudo-header order (m,a,s,p).
func (fp *Fingerprint) H2() string {
	order := ""
	for i, p := range fp.Client.GetPseudoHeaderOrder() {
		if i > 0 {
			order += ","
		}
		order += p[1:2]
	}
	prio := "0"
	if n := len(fp.Client.GetPriorities()); n > 0 {
		prio = fmt.Sprint(n)
	}
	return fmt.Sprintf("%s|%d|%s|%s", fp.settingsString(), fp.Client.GetConnectionFlow(), prio, order)
}

// headerOrder is the request's own order (fp's HeaderOrder when it has
// none) with names not in it appended.
func (fp *Fingerprint) headerOrder(order, names []string) []string {
	if order == nil {
		order = fp.HeaderOrder
	}
	out := slices.Clone(order)
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
