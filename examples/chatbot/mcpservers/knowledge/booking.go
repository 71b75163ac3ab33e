package knowledge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/args"
)

// Products a demo can be booked for.
var demoProducts = []string{"Insights", "Pipelines", "Forecast", "API"}

// Booking is the structured content of a book_demo result.
type Booking struct {
	// Status is "booked", "declined" or "cancelled".
	Status string `json:"status"`
	// Reference identifies the booking; empty unless booked.
	Reference string `json:"reference,omitempty"`
	// Email is where the invitation goes; empty unless booked.
	Email string `json:"email,omitempty"`
	// Date is the demo day, YYYY-MM-DD; empty unless booked.
	Date string `json:"date,omitempty"`
	// Product is the product the demo focuses on; empty unless booked.
	Product string `json:"product,omitempty"`
}

const elicitID = "demo_details"

func bookDemoTool() mcp.Tool {
	return mcp.NewTool("book_demo",
		mcp.WithDescription("Book a 45-minute product demo with the Acme Analytics sales team. "+
			"Details the caller does not give are asked from the user, who may decline."),
		mcp.WithString("email", mcp.Description("The user's work email address.")),
		mcp.WithString("date", mcp.Description("Demo date, YYYY-MM-DD, a weekday after today.")),
		mcp.WithString("product", mcp.Description("Product to focus on."), mcp.Enum(demoProducts...)),
		mcp.WithOutputSchema[Booking](),
	)
}

// bookDemo asks for missing details with a multi-round-trip elicitation:
// mcp-go sends it as an input_required result to 2026-07-28 clients and as a
// blocking elicitation/create request to older ones, then calls this handler
// again with the answer.
func (k *kb) bookDemo(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	email, errResult := args.OptionalString(req, "email")
	if errResult != nil {
		return errResult, nil
	}
	date, errResult := args.OptionalString(req, "date")
	if errResult != nil {
		return errResult, nil
	}
	product, errResult := args.OptionalString(req, "product")
	if errResult != nil {
		return errResult, nil
	}

	if answer := server.ElicitationResponse(req.Params.InputResponses, elicitID); answer != nil {
		switch answer.Action {
		case mcp.ElicitationResponseActionAccept:
			content, _ := answer.Content.(map[string]any)
			for field, dst := range map[string]*string{"email": &email, "date": &date, "product": &product} {
				if v, ok := content[field].(string); ok && strings.TrimSpace(v) != "" {
					*dst = strings.TrimSpace(v)
				}
			}
		case mcp.ElicitationResponseActionDecline:
			return declined("declined", "The user declined to give demo details; no demo was booked."), nil
		default:
			return declined("cancelled", "The user cancelled the demo request; no demo was booked."), nil
		}
		if email == "" || date == "" {
			return mcp.NewToolResultError("the user's answer left out the email or the date; no demo was booked"), nil
		}
	} else if email == "" || date == "" {
		if !canElicit(ctx) {
			return mcp.NewToolResultError("book_demo needs the email and date arguments: this client cannot ask the user (it declared no elicitation capability)"), nil
		}
		return server.NewInputRequestBuilder("").Elicit(elicitID, mcp.ElicitationParams{
			Message:         "To book a 45-minute Acme Analytics demo, please give your work email and a date.",
			RequestedSchema: k.demoSchema(email, date, product),
		}).ToolResult(), nil
	}

	if _, err := mail.ParseAddress(email); err != nil || !strings.Contains(email, "@") || strings.ContainsAny(email, "<> ") {
		return mcp.NewToolResultErrorf("email: %q is not an email address; give one like name@company.com", email), nil
	}
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return mcp.NewToolResultErrorf("date: %q is not a date in YYYY-MM-DD form", date), nil
	}
	today := k.now()
	todayDate := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	if !day.After(todayDate) {
		return mcp.NewToolResultErrorf("date: %s is not after today (%s); pick a later day", date, todayDate.Format(time.DateOnly)), nil
	}
	if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return mcp.NewToolResultErrorf("date: %s is a %s; demos are held Monday to Friday", date, wd), nil
	}
	if product == "" {
		product = demoProducts[0]
	}
	if !slices.Contains(demoProducts, product) {
		return mcp.NewToolResultErrorf("product: %q is not a product; use one of %s", product, strings.Join(demoProducts, ", ")), nil
	}

	sum := sha256.Sum256([]byte(strings.ToLower(email) + "|" + date + "|" + product))
	b := Booking{Status: "booked", Reference: "DEMO-" + strings.ToUpper(hex.EncodeToString(sum[:4])),
		Email: email, Date: date, Product: product}
	k.log.Debug("book_demo", zap.String("reference", b.Reference))
	return mcp.NewToolResultStructured(b, fmt.Sprintf(
		"Booked a 45-minute %s demo on %s (%s). Reference %s; the invitation goes to %s.",
		b.Product, day.Format("Monday 2 January 2006"), b.Date, b.Reference, b.Email)), nil
}

func declined(status, text string) *mcp.CallToolResult {
	return mcp.NewToolResultStructured(Booking{Status: status}, text)
}

// demoSchema is the form shown to the user, prefilled with what the caller
// already gave.
func (k *kb) demoSchema(email, date, product string) map[string]any {
	withDefault := func(prop map[string]any, v string) map[string]any {
		if v != "" {
			prop["default"] = v
		}
		return prop
	}
	if product == "" {
		product = demoProducts[0]
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"email": withDefault(map[string]any{
				"type": "string", "format": "email", "title": "Work email",
				"description": "Where to send the invitation.",
			}, email),
			"date": withDefault(map[string]any{
				"type": "string", "format": "date", "title": "Date",
				"description": "A weekday after today (YYYY-MM-DD).",
			}, date),
			"product": withDefault(map[string]any{
				"type": "string", "title": "Product", "enum": demoProducts,
			}, product),
		},
		"required": []string{"email", "date"},
	}
}

// canElicit reports whether the client can answer an elicitation. A
// 2026-07-28 request declares its client's capabilities in _meta; an older
// client declared them at initialize.
func canElicit(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil
	}
	session, ok := server.ClientSessionFromContext(ctx).(interface {
		GetClientCapabilities() mcp.ClientCapabilities
	})
	if !ok {
		return true // unknown: let mcp-go try
	}
	return session.GetClientCapabilities().Elicitation != nil
}
