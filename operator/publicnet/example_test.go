package publicnet_test

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/agentgraph/agentgraph/operator/publicnet"
)

// A client for URLs a model chose: the cloud metadata endpoint and the
// host's own services are refused, an intranet range is opened.
func Example() {
	c := publicnet.NewClient(publicnet.Config{Allow: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}})
	defer c.CloseIdleConnections()
	_, err := c.Get("http://169.254.169.254/latest/meta-data/")
	var refused *publicnet.AddrError
	fmt.Println(errors.As(err, &refused))
	fmt.Println(publicnet.Public(netip.MustParseAddr("10.20.1.5")))
	// Output:
	// true
	// false
}
