package mcp

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// OAuth authorizes a remote server's requests with OAuth 2.1, the way the
// MCP authorization spec describes: the manager finds the authorization
// server from the server's 401 challenge or its protected resource metadata
// (RFC 9728), reads the authorization server's metadata (RFC 8414 or OpenID
// discovery, with the 2025-03-26 fallbacks), identifies the client
// (pre-registered, Client ID Metadata Document, or dynamic registration),
// obtains a token (authorization code with PKCE S256, or client
// credentials), sends it, refreshes it, and asks again with more scopes
// when the server answers 403 insufficient_scope.
type OAuth struct {
	// ClientID and ClientSecret of a pre-registered client. An empty
	// ClientID means a Client ID Metadata Document when ClientMetadataURL is
	// set and the authorization server supports it, else dynamic client
	// registration.
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is the https URL of this client's metadata document,
	// used as its client_id where supported.
	ClientMetadataURL string
	// ClientName is sent in dynamic registration. Empty means the manager's
	// client name.
	ClientName string
	// Scopes to ask for. Empty means the scope of the server's challenge,
	// else every scope its protected resource metadata lists.
	Scopes []string
	// GrantType is "authorization_code" (the default: a user authorizes)
	// or "client_credentials" (a service acting as itself, with ClientID
	// and ClientSecret or PrivateKey).
	GrantType string
	// PrivateKey, a PEM-encoded EC (ES256) or RSA (RS256) key, makes the
	// client authenticate with a signed JWT (private_key_jwt) instead of a
	// secret.
	PrivateKey string
	// RedirectURI receives the authorization code. Empty means
	// "http://localhost:3000/callback".
	RedirectURI string
	// Authorize sends the user to authURL and returns the URL the
	// authorization server redirected back to (with code and state).
	// Required for the authorization code grant. Its time does not count
	// against ManagerConfig.ConnectTimeout (over every transport); ctx
	// ends with the caller's context, and when the server is removed or
	// the manager shut down.
	Authorize func(ctx context.Context, authURL string) (redirected *url.URL, err error)
	// AuthorizationServers are the issuer identifiers (RFC 8414) of the
	// authorization servers that may receive this client's credentials
	// (ClientSecret, a PrivateKey assertion, an Enterprise identity
	// assertion), whichever the MCP server's protected resource metadata
	// names (or, for a server without protected resource metadata, the
	// MCP server's own origin, which then is the authorization server).
	// An entry without a path allows every issuer of its origin. Empty
	// means the MCP server's own origin only: a client with credentials
	// refuses an authorization server elsewhere (an [*AuthError] naming
	// this field) rather than sending them there, and so it does when the
	// authorization server's metadata puts its token or registration
	// endpoint on another origin than its issuer's that is not allowed. A
	// client without credentials (dynamic registration, a Client ID
	// Metadata Document) uses whichever server the metadata names. In
	// every case the authorization server's metadata must name the issuer
	// it was fetched for (RFC 8414 §3.3), else it is refused.
	AuthorizationServers []string
	// AnyAuthorizationServer lifts the AuthorizationServers restriction:
	// the client's credentials go to whichever authorization server the
	// MCP server names (the issuer check still applies). Set it only for
	// an MCP server trusted with the credentials, such as a test harness
	// whose authorization server's address is not known in advance.
	AnyAuthorizationServer bool
	// Enterprise, when set, obtains tokens the enterprise-managed way
	// (SEP-990) instead of asking the user: the enterprise identity
	// provider trades the user's ID token for an identity assertion grant
	// (RFC 8693), which the authorization server trades for an access token
	// (RFC 7523 JWT bearer grant) with ClientID and ClientSecret.
	Enterprise *EnterpriseIdP
}

// EnterpriseIdP is the enterprise identity provider of [OAuth].Enterprise.
type EnterpriseIdP struct {
	// TokenEndpoint is the identity provider's token endpoint.
	TokenEndpoint string
	// ClientID and ClientSecret identify this client at the identity
	// provider (ClientSecret may be empty).
	ClientID     string
	ClientSecret string
	// IDToken returns the signed-in user's ID token from the identity
	// provider.
	IDToken func(ctx context.Context) (string, error)
}

// AuthError is the error of a request the server refused because the client
// could not be authorized. It is retried only when [AuthError.Transient]:
// a refusal, a configuration error or a failed interactive authorization
// is not.
type AuthError struct {
	Server string
	Err    error
}

// Transient reports whether the authorization failed because an
// authorization server or a metadata endpoint could not be reached or
// answered with a 5xx status: trying again later may succeed.
func (e *AuthError) Transient() bool {
	var o *authOutage
	return errors.As(e.Err, &o)
}

// authOutage is an authorization failure of an endpoint that could not be
// reached or answered with a 5xx status.
type authOutage struct{ err error }

func (e *authOutage) Error() string { return e.err.Error() }
func (e *authOutage) Unwrap() error { return e.err }

// outage returns the error of a request to what (an endpoint's role) at u
// that failed with err or answered status, an *authOutage when it could
// not be reached or answered 5xx, else nil.
func outage(what, u string, status int, err error) error {
	switch {
	case err != nil:
		return &authOutage{fmt.Errorf("%s %s could not be reached: %w", what, u, err)}
	case status >= 500:
		return &authOutage{fmt.Errorf("%s %s answered %d %s; try again later", what, u, status, http.StatusText(status))}
	}
	return nil
}

// Error names the server and the cause.
func (e *AuthError) Error() string {
	return fmt.Sprintf("mcp: authorization for server %q: %v", e.Server, e.Err)
}

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// challenge is a Bearer challenge from a 401 or 403 response.
type challenge struct {
	status           int
	resourceMetadata string
	scope            string
	err              string
}

var authParam = regexp.MustCompile(`([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|([^\s,]+))`)

func parseChallenge(status int, values []string) *challenge {
	ch := &challenge{status: status}
	for _, v := range values {
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "bearer") {
			continue
		}
		for _, m := range authParam.FindAllStringSubmatch(v, -1) {
			val := m[2] + m[3]
			switch strings.ToLower(m[1]) {
			case "resource_metadata":
				ch.resourceMetadata = val
			case "scope":
				ch.scope = val
			case "error":
				ch.err = val
			}
		}
	}
	return ch
}

// asMetadata is the part of RFC 8414 metadata the client uses.
type asMetadata struct {
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RegistrationEndpoint  string   `json:"registration_endpoint"`
	ScopesSupported       []string `json:"scopes_supported"`
	AuthMethods           []string `json:"token_endpoint_auth_methods_supported"`
	GrantTypes            []string `json:"grant_types_supported"`
	CIMDSupported         bool     `json:"client_id_metadata_document_supported"`
}

type tokenSet struct {
	access, refresh string
	expiry          time.Time
}

// authorizer holds one server's OAuth state; it outlives reconnects.
type authorizer struct {
	o          OAuth
	server     string
	resource   string // the MCP server URL
	hc         *http.Client
	log        *zap.Logger
	clientName string

	mu         sync.Mutex
	token      *tokenSet
	meta       *asMetadata
	issuer     string // the authorization server discovery chose for meta
	resourceID string // the resource parameter (RFC 8707)
	prmScopes  []string
	scopes     []string
	clientID   string
	secret     string
	authMethod string
}

func newAuthorizer(c *conn) *authorizer {
	o := *c.spec.OAuth
	if o.RedirectURI == "" {
		o.RedirectURI = "http://localhost:3000/callback"
	}
	name := o.ClientName
	if name == "" {
		name = c.m.cfg.ClientName
	}
	hc := *c.m.cfg.HTTPClient
	hc.CheckRedirect = sameOriginHops(hc.CheckRedirect)
	return &authorizer{o: o, server: c.spec.Name, resource: c.spec.URL, hc: &hc, log: c.log, clientName: name,
		clientID: o.ClientID, secret: o.ClientSecret}
}

// sameOriginHops returns a CheckRedirect that follows a redirect only
// within the first request's origin (then asks next, if any), so that a
// token request's credentials are never posted to another origin.
func sameOriginHops(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if from, to := originOf(via[0].URL.String()), originOf(req.URL.String()); from != to {
			return fmt.Errorf("redirect from %s to another origin (%s) not followed", from, to)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
}

// credentialed reports whether the client holds credentials of its own
// (not ones an authorization server issued it by registration), which go
// only to the authorization servers OAuth.AuthorizationServers allows.
func (a *authorizer) credentialed() bool {
	return a.o.ClientSecret != "" || a.o.PrivateKey != "" || a.o.Enterprise != nil
}

// allowed reports whether the authorization server issuer may receive the
// client's credentials.
func (a *authorizer) allowed(issuer string) bool {
	if len(a.o.AuthorizationServers) == 0 {
		return originOf(issuer) != "" && originOf(issuer) == originOf(a.resource)
	}
	for _, s := range a.o.AuthorizationServers {
		if sameIssuer(s, issuer) {
			return true
		}
		if u, err := url.Parse(s); err == nil && strings.Trim(u.Path, "/") == "" && originOf(s) != "" && originOf(s) == originOf(issuer) {
			return true
		}
	}
	return false
}

// restricted reports whether the client's credentials go only to the
// authorization servers OAuth.AuthorizationServers allows.
func (a *authorizer) restricted() bool {
	return a.credentialed() && !a.o.AnyAuthorizationServer
}

// checkEndpoints refuses metadata (fetched at u for issuer) whose token or
// registration endpoint is on another origin than the issuer's that is not
// allowed either, when the client's credentials would be posted there.
func (a *authorizer) checkEndpoints(u, issuer string, m *asMetadata) error {
	if !a.restricted() {
		return nil
	}
	for _, e := range []struct{ name, url string }{{"token_endpoint", m.TokenEndpoint}, {"registration_endpoint", m.RegistrationEndpoint}} {
		if e.url == "" {
			continue
		}
		if o := originOf(e.url); o == "" || o != originOf(issuer) && !a.allowed(e.url) {
			return fmt.Errorf("authorization server metadata at %s puts its %s at %s, another origin than its issuer %s, which is not allowed to receive this client's credentials; add it to OAuth.AuthorizationServers if it is the authorization server's", u, e.name, e.url, issuer)
		}
	}
	return nil
}

// sameIssuer compares issuer identifiers, ignoring a trailing slash.
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

func (a *authorizer) bearer() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == nil {
		return ""
	}
	return a.token.access
}

// roundTrip sends req with the current token and, on a 401 or a 403
// insufficient_scope, authorizes and sends it again (at most twice).
func (a *authorizer) roundTrip(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if attempt > 0 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		sent := a.bearer()
		if sent != "" {
			r.Header.Set("Authorization", "Bearer "+sent)
		}
		resp, err := next.RoundTrip(r)
		if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			return resp, err
		}
		ch := parseChallenge(resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
		replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		if attempt >= 2 || !replayable || (resp.StatusCode == http.StatusForbidden && ch.err != "insufficient_scope") {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err := a.authorize(req.Context(), ch, sent); err != nil {
			return nil, &AuthError{Server: a.server, Err: err}
		}
	}
}

// authorize obtains a new token after the server refused sent.
func (a *authorizer) authorize(ctx context.Context, ch *challenge, sent string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != nil && a.token.access != sent {
		return nil // another request already obtained a new token
	}
	if a.meta == nil || ch.resourceMetadata != "" {
		// First: the server may name another authorization server now,
		// and the old one's refresh token must not keep the client there.
		if err := a.discover(ctx, ch); err != nil {
			return err
		}
	}
	if ch.status == http.StatusUnauthorized && a.token != nil && a.token.refresh != "" {
		err := a.refresh(ctx)
		if err == nil {
			return nil
		}
		var o *authOutage
		if errors.As(err, &o) {
			return err // not the user's business: the authorization server is down
		}
		a.log.Debug("mcp oauth: refresh failed; authorizing again")
	}
	a.chooseScopes(ch)
	switch {
	case a.o.Enterprise != nil:
		return a.enterprise(ctx)
	case a.o.GrantType == "client_credentials":
		return a.clientCredentials(ctx)
	}
	return a.authorizationCode(ctx)
}

// enterprise runs the SEP-990 flow: token exchange at the identity
// provider for an ID-JAG, then the JWT bearer grant at the authorization
// server.
func (a *authorizer) enterprise(ctx context.Context) error {
	idp := a.o.Enterprise
	if idp.IDToken == nil || idp.TokenEndpoint == "" || a.clientID == "" {
		return errors.New("enterprise authorization needs Enterprise.TokenEndpoint, Enterprise.IDToken and OAuth.ClientID")
	}
	idToken, err := idp.IDToken(ctx)
	if err != nil {
		return fmt.Errorf("ID token: %w", err)
	}
	form := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
		"subject_token":        {idToken},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:id_token"},
		"audience":             {a.meta.Issuer},
		"resource":             {a.resourceID},
		"client_id":            {idp.ClientID},
	}
	if idp.ClientSecret != "" {
		form.Set("client_secret", idp.ClientSecret)
	}
	if len(a.scopes) > 0 {
		form.Set("scope", strings.Join(a.scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, idp.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := a.hc.Do(req)
	if err != nil {
		return outage("identity provider token endpoint", idp.TokenEndpoint, 0, err)
	}
	defer resp.Body.Close()
	if err := outage("identity provider token endpoint", idp.TokenEndpoint, resp.StatusCode, nil); err != nil {
		return err
	}
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return fmt.Errorf("identity provider %s refused the token exchange: %d %s", idp.TokenEndpoint, resp.StatusCode, out.Error)
	}
	if a.authMethod == "" {
		a.authMethod = a.pickAuthMethod()
	}
	return a.tokenRequest(ctx, url.Values{
		"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"assertion":  {out.AccessToken},
		"resource":   {a.resourceID},
	})
}

// getJSON fetches what (an endpoint's role) at u into v. It reports
// whether u served it, and an *authOutage when u could not be reached or
// answered 5xx; any other answer (404 above all) is (false, nil).
func (a *authorizer) getJSON(ctx context.Context, what, u string, v any) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, nil
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", ProtocolLegacy)
	resp, err := a.hc.Do(req)
	if err != nil {
		return false, outage(what, u, 0, err)
	}
	defer resp.Body.Close()
	if err := outage(what, u, resp.StatusCode, nil); err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		return false, nil
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v) == nil, nil
}

// discover finds the protected resource metadata and the authorization
// server's metadata.
func (a *authorizer) discover(ctx context.Context, ch *challenge) error {
	ru, err := url.Parse(a.resource)
	if err != nil {
		return err
	}
	origin := ru.Scheme + "://" + ru.Host
	var candidates []string
	if ch.resourceMetadata != "" {
		candidates = append(candidates, ch.resourceMetadata)
	}
	if p := strings.TrimSuffix(ru.Path, "/"); p != "" {
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	found := false
	var down error // the first candidate that could not be fetched
	for _, c := range candidates {
		ok, err := a.getJSON(ctx, "protected resource metadata at", c, &prm)
		if ok && len(prm.AuthorizationServers) > 0 {
			found = true
			break
		}
		down = cmp.Or(down, err)
	}
	if !found && down != nil {
		// Not "no metadata": it may be there once its server is back.
		return down
	}
	issuer := origin // 2025-03-26: the MCP server's origin is the authorization server
	a.resourceID = a.resource
	if found {
		if prm.Resource != "" {
			if !resourceCovers(prm.Resource, a.resource) {
				return fmt.Errorf("protected resource metadata is for %q, not %q; refusing to send a token there", prm.Resource, a.resource)
			}
			a.resourceID = prm.Resource
		}
		issuer = prm.AuthorizationServers[0]
		if a.restricted() {
			i := slices.IndexFunc(prm.AuthorizationServers, a.allowed)
			if i < 0 {
				return fmt.Errorf("the server names authorization servers %q, none of them allowed to receive this client's credentials; add the right one to OAuth.AuthorizationServers (empty allows only the MCP server's origin, %s)",
					prm.AuthorizationServers, origin)
			}
			issuer = prm.AuthorizationServers[i]
		}
		a.prmScopes = prm.ScopesSupported
	} else if a.restricted() && !a.allowed(issuer) {
		// 2025-03-26: the MCP server's origin is the authorization server,
		// and it too has to be allowed.
		return fmt.Errorf("the server publishes no protected resource metadata, so its own origin %s is the authorization server, which is not allowed to receive this client's credentials; add it to OAuth.AuthorizationServers", origin)
	}
	if a.issuer != "" && !sameIssuer(a.issuer, issuer) {
		// Another authorization server: what the last one registered,
		// chose or issued does not carry over (its refresh token must
		// never be posted to the new one).
		if a.o.ClientID == "" {
			a.clientID, a.secret = "", ""
		}
		a.authMethod = ""
		a.token = nil
	}
	a.issuer = issuer
	iu, err := url.Parse(issuer)
	if err != nil {
		return fmt.Errorf("authorization server %q: %w", issuer, err)
	}
	iorigin := iu.Scheme + "://" + iu.Host
	ipath := strings.TrimSuffix(iu.Path, "/")
	var metaURLs []string
	if ipath != "" {
		metaURLs = []string{iorigin + "/.well-known/oauth-authorization-server" + ipath, iorigin + "/.well-known/openid-configuration" + ipath, iorigin + ipath + "/.well-known/openid-configuration"}
	} else {
		metaURLs = []string{iorigin + "/.well-known/oauth-authorization-server", iorigin + "/.well-known/openid-configuration"}
	}
	down = nil
	for _, u := range metaURLs {
		var m asMetadata
		ok, err := a.getJSON(ctx, "authorization server metadata at", u, &m)
		down = cmp.Or(down, err)
		if ok && m.TokenEndpoint != "" {
			// RFC 8414 §3.3: metadata naming another issuer than the one
			// it was fetched for must not be used. Without protected
			// resource metadata (2025-03-26) nobody named an issuer: the
			// metadata only has to stay on the MCP server's origin.
			if found && !sameIssuer(m.Issuer, issuer) || !found && originOf(m.Issuer) != originOf(issuer) {
				return fmt.Errorf("authorization server metadata at %s names issuer %q, not %q, the one it was fetched for; refusing it (RFC 8414 §3.3)", u, m.Issuer, issuer)
			}
			if err := a.checkEndpoints(u, issuer, &m); err != nil {
				return err
			}
			a.meta = &m
			return nil
		}
	}
	if down != nil {
		return down // not the default endpoints: the metadata may be there once its server is back
	}
	// No metadata: the 2025-03-26 default endpoints.
	a.meta = &asMetadata{Issuer: iorigin, AuthorizationEndpoint: iorigin + "/authorize", TokenEndpoint: iorigin + "/token", RegistrationEndpoint: iorigin + "/register"}
	return nil
}

// resourceCovers reports whether the advertised resource identifier covers
// the server URL: same origin, and a path prefix of it.
func resourceCovers(advertised, server string) bool {
	au, err1 := url.Parse(advertised)
	su, err2 := url.Parse(server)
	if err1 != nil || err2 != nil || !strings.EqualFold(au.Scheme, su.Scheme) || !strings.EqualFold(au.Host, su.Host) {
		return false
	}
	ap, sp := strings.TrimSuffix(au.Path, "/"), strings.TrimSuffix(su.Path, "/")
	return ap == "" || sp == ap || strings.HasPrefix(sp, ap+"/")
}

func (a *authorizer) chooseScopes(ch *challenge) {
	switch {
	case len(a.o.Scopes) > 0:
		a.scopes = slices.Clone(a.o.Scopes)
	case ch.scope != "":
		// Keep what was granted and add what the challenge names (step-up).
		for _, s := range strings.Fields(ch.scope) {
			if !slices.Contains(a.scopes, s) {
				a.scopes = append(a.scopes, s)
			}
		}
	case len(a.scopes) == 0 && len(a.prmScopes) > 0:
		a.scopes = slices.Clone(a.prmScopes)
	}
	if a.o.GrantType != "client_credentials" && a.meta != nil && slices.Contains(a.meta.ScopesSupported, "offline_access") &&
		len(a.scopes) > 0 && !slices.Contains(a.scopes, "offline_access") {
		a.scopes = append(a.scopes, "offline_access")
	}
}

// identify makes sure the client has a client_id for the authorization
// code grant.
func (a *authorizer) identify(ctx context.Context) error {
	if a.clientID != "" {
		if a.authMethod == "" {
			a.authMethod = a.pickAuthMethod()
		}
		return nil
	}
	if a.meta.CIMDSupported && a.o.ClientMetadataURL != "" {
		a.clientID, a.authMethod = a.o.ClientMetadataURL, "none"
		return nil
	}
	if a.meta.RegistrationEndpoint == "" {
		return errors.New("the authorization server offers no dynamic client registration; set OAuth.ClientID")
	}
	method := a.pickAuthMethod()
	reg := map[string]any{
		"client_name":                a.clientName,
		"redirect_uris":              []string{a.o.RedirectURI},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
	}
	if len(a.scopes) > 0 {
		reg["scope"] = strings.Join(a.scopes, " ")
	}
	body, _ := json.Marshal(reg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.meta.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return outage("registration endpoint", a.meta.RegistrationEndpoint, 0, err)
	}
	defer resp.Body.Close()
	if err := outage("registration endpoint", a.meta.RegistrationEndpoint, resp.StatusCode, nil); err != nil {
		return err
	}
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if resp.StatusCode/100 != 2 || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out) != nil || out.ClientID == "" {
		return fmt.Errorf("dynamic client registration at %s failed (status %d)", a.meta.RegistrationEndpoint, resp.StatusCode)
	}
	a.clientID, a.secret, a.authMethod = out.ClientID, out.ClientSecret, cmpOr(out.AuthMethod, method)
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (a *authorizer) pickAuthMethod() string {
	supported := a.meta.AuthMethods
	has := func(m string) bool {
		return len(supported) == 0 && m == "client_secret_basic" || slices.Contains(supported, m)
	}
	switch {
	case a.o.PrivateKey != "":
		return "private_key_jwt"
	case a.clientID != "" && a.secret == "":
		return "none"
	case has("client_secret_basic"):
		return "client_secret_basic"
	case has("client_secret_post"):
		return "client_secret_post"
	case slices.Contains(supported, "none"):
		return "none"
	}
	return "client_secret_basic"
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (a *authorizer) authorizationCode(ctx context.Context) error {
	if a.o.Authorize == nil {
		return errors.New("the server needs a user's authorization; set OAuth.Authorize (or GrantType \"client_credentials\")")
	}
	if err := a.identify(ctx); err != nil {
		return err
	}
	verifier := randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	state := randomString(16)
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {a.clientID},
		"redirect_uri":          {a.o.RedirectURI},
		"state":                 {state},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"resource":              {a.resourceID},
	}
	if len(a.scopes) > 0 {
		q.Set("scope", strings.Join(a.scopes, " "))
	}
	authURL := a.meta.AuthorizationEndpoint
	if strings.Contains(authURL, "?") {
		authURL += "&" + q.Encode()
	} else {
		authURL += "?" + q.Encode()
	}
	actx, release := connectBound(ctx) // closing or removing the server ends it
	resume := pauseConnectClock(ctx)   // a person's time is not the connect's
	back, err := a.o.Authorize(actx, authURL)
	resume()
	release()
	if err != nil {
		return fmt.Errorf("authorize: %w", err)
	}
	bq := back.Query()
	if e := bq.Get("error"); e != "" {
		return fmt.Errorf("authorization denied: %s %s", e, bq.Get("error_description"))
	}
	if s := bq.Get("state"); s != "" && s != state {
		return errors.New("authorization response carries the wrong state; refusing it")
	}
	if bq.Get("code") == "" {
		return fmt.Errorf("redirect %s carries no authorization code", back.Redacted())
	}
	return a.tokenRequest(ctx, url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {bq.Get("code")},
		"redirect_uri":  {a.o.RedirectURI},
		"code_verifier": {verifier},
		"resource":      {a.resourceID},
	})
}

func (a *authorizer) clientCredentials(ctx context.Context) error {
	if a.clientID == "" {
		return errors.New("the client credentials grant needs OAuth.ClientID")
	}
	if a.authMethod == "" {
		a.authMethod = a.pickAuthMethod()
	}
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {a.resourceID}}
	if len(a.scopes) > 0 {
		form.Set("scope", strings.Join(a.scopes, " "))
	}
	return a.tokenRequest(ctx, form)
}

func (a *authorizer) refresh(ctx context.Context) error {
	return a.tokenRequest(ctx, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.token.refresh}, "resource": {a.resourceID}})
}

// tokenRequest posts form to the token endpoint with the client's
// authentication and stores the token.
func (a *authorizer) tokenRequest(ctx context.Context, form url.Values) error {
	switch a.authMethod {
	case "client_secret_post":
		form.Set("client_id", a.clientID)
		form.Set("client_secret", a.secret)
	case "private_key_jwt":
		assertion, err := a.assertion()
		if err != nil {
			return err
		}
		form.Set("client_id", a.clientID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", assertion)
	case "client_secret_basic":
	default:
		form.Set("client_id", a.clientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.meta.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if a.authMethod == "client_secret_basic" {
		req.SetBasicAuth(url.QueryEscape(a.clientID), url.QueryEscape(a.secret))
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return outage("token endpoint", a.meta.TokenEndpoint, 0, err)
	}
	defer resp.Body.Close()
	if err := outage("token endpoint", a.meta.TokenEndpoint, resp.StatusCode, nil); err != nil {
		return err
	}
	var out struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return fmt.Errorf("token endpoint %s answered %d %s %s", a.meta.TokenEndpoint, resp.StatusCode, out.Error, out.Description)
	}
	t := &tokenSet{access: out.AccessToken, refresh: out.RefreshToken}
	if t.refresh == "" && a.token != nil && form.Get("grant_type") == "refresh_token" {
		t.refresh = a.token.refresh
	}
	if out.ExpiresIn > 0 {
		t.expiry = time.Now().Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	a.token = t
	return nil
}

// assertion signs a private_key_jwt client assertion (RFC 7523).
func (a *authorizer) assertion() (string, error) {
	block, _ := pem.Decode([]byte(a.o.PrivateKey))
	if block == nil {
		return "", errors.New("OAuth.PrivateKey is not PEM")
	}
	var key any
	var err error
	if key, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if key, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
			if key, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
				return "", fmt.Errorf("OAuth.PrivateKey: %w", err)
			}
		}
	}
	alg := ""
	switch key.(type) {
	case *ecdsa.PrivateKey:
		alg = "ES256"
	case *rsa.PrivateKey:
		alg = "RS256"
	default:
		return "", fmt.Errorf("OAuth.PrivateKey: %T keys are not supported; use EC P-256 or RSA", key)
	}
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": a.clientID, "sub": a.clientID, "aud": a.meta.Issuer, "iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(), "jti": randomString(16),
	})
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			return "", err
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:]); err != nil {
			return "", err
		}
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
