package client

// HostRoutes lists the "METHOD /v2/fs/..." routes a host client serves,
// for the tests that check them against the server's.
func HostRoutes() []string {
	out := make([]string, len(hostRoutes))
	for i, r := range hostRoutes {
		out[i] = r.Route
	}
	return out
}
