package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// OAuth authorizes a remote server's requests with OAuth 2.1 (authorization
// code with PKCE S256, dynamic client registration when no ClientID is
// given, token refresh).
type OAuth struct {
	// ClientID and ClientSecret of a pre-registered client. An empty
	// ClientID means dynamic client registration.
	ClientID     string
	ClientSecret string
	// Scopes to ask for. Empty means the scope the server's challenge or its
	// protected resource metadata names.
	Scopes []string
	// RedirectURI receives the authorization code. Empty means
	// "http://localhost:3000/callback".
	RedirectURI string
	// TokenStore keeps tokens. Nil means an in-memory store per connection.
	TokenStore transport.TokenStore
	// Authorize sends the user to authURL and returns the URL the
	// authorization server redirected back to (carrying code and state). It
	// is required: without it the manager cannot obtain a token.
	Authorize func(ctx context.Context, authURL string) (redirected *url.URL, err error)
	// ClientName is sent in dynamic client registration. Empty means the
	// manager's client name.
	ClientName string
}

func (o *OAuth) config(hc *http.Client, scopes []string, prm string) transport.OAuthConfig {
	redirect := o.RedirectURI
	if redirect == "" {
		redirect = "http://localhost:3000/callback"
	}
	store := o.TokenStore
	if store == nil {
		store = client.NewMemoryTokenStore()
	}
	if len(o.Scopes) > 0 {
		scopes = o.Scopes
	}
	return transport.OAuthConfig{
		ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURI: redirect,
		Scopes: scopes, TokenStore: store, PKCEEnabled: true, HTTPClient: hc,
		ProtectedResourceMetadataURL: prm,
	}
}

// authorize runs the authorization code flow on h.
func (o *OAuth) authorize(ctx context.Context, h *transport.OAuthHandler, clientName string) error {
	if h == nil {
		return errors.New("mcp: oauth: the server asked for authorization but gave no handler")
	}
	if o.Authorize == nil {
		return errors.New("mcp: oauth: the server needs authorization; set OAuth.Authorize to send the user to the authorization URL")
	}
	if h.GetClientID() == "" {
		if o.ClientName != "" {
			clientName = o.ClientName
		}
		if err := h.RegisterClient(ctx, clientName); err != nil {
			return fmt.Errorf("mcp: oauth: dynamic client registration: %w", err)
		}
	}
	verifier, err := client.GenerateCodeVerifier()
	if err != nil {
		return err
	}
	state, err := client.GenerateState()
	if err != nil {
		return err
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, client.GenerateCodeChallenge(verifier))
	if err != nil {
		return fmt.Errorf("mcp: oauth: authorization URL: %w", err)
	}
	back, err := o.Authorize(ctx, authURL)
	if err != nil {
		return fmt.Errorf("mcp: oauth: authorize: %w", err)
	}
	q := back.Query()
	if e := q.Get("error"); e != "" {
		return fmt.Errorf("mcp: oauth: authorization denied: %s %s", e, q.Get("error_description"))
	}
	code := q.Get("code")
	if code == "" {
		return fmt.Errorf("mcp: oauth: redirect %q carries no code", back.Redacted())
	}
	got := q.Get("state")
	if got == "" {
		got = state
	}
	if err := h.ProcessAuthorizationResponse(ctx, code, got, verifier); err != nil {
		return fmt.Errorf("mcp: oauth: token exchange: %w", err)
	}
	return nil
}

// challenge is a Bearer challenge from a 401 or 403 response.
type challenge struct {
	status           int
	resourceMetadata string
	scope            string
	err              string
}
