// A proxyless gRPC client of gRPC Go's own xDS implementation, for Meshdeck's tests: the one real xDS
// client here that presents a client certificate to the ADS server (gRFC A65 `tls` channel credentials
// in the bootstrap GRPC_XDS_BOOTSTRAP names; @grpc/grpc-js-xds cannot). It calls the test backends'
// unary /demo.Demo/Who (JSON bodies, sent as raw bytes) on -target `count` times, waiting for the xDS
// config first, and prints one JSON line per call: {"backend": ...} or {"error": ...}. With -hold it keeps
// the channel open afterwards, so its load reports (LRS, when a cluster asks for them) reach the server.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/xds" // the xds:/// resolver, its balancers and the bootstrap's tls creds
)

// raw passes JSON bodies through as bytes; named "proto" so the content type is application/grpc+proto.
type raw struct{}

func (raw) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (raw) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (raw) Name() string { return "proto" }

func main() {
	target := flag.String("target", "", "xds:///NAME")
	count := flag.Int("count", 1, "calls to make")
	timeout := flag.Duration("timeout", 30*time.Second, "for all calls together")
	hold := flag.Duration("hold", 0, "keep the channel open this long after the calls (its load reports go out)")
	flag.Parse()
	if *target == "" || os.Getenv("GRPC_XDS_BOOTSTRAP") == "" {
		fmt.Fprintln(os.Stderr, "usage: GRPC_XDS_BOOTSTRAP=FILE grpc-go-xds-client -target xds:///NAME [-count N]")
		os.Exit(2)
	}
	conn, err := grpc.NewClient(*target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	out := json.NewEncoder(os.Stdout)
	failed := 0
	for i := 0; i < *count; i++ {
		req, resp := []byte("{}"), []byte(nil)
		err := conn.Invoke(ctx, "/demo.Demo/Who", &req, &resp, grpc.ForceCodec(raw{}), grpc.WaitForReady(true))
		if err != nil {
			failed++
			_ = out.Encode(map[string]string{"error": err.Error()})
			continue
		}
		var who map[string]any
		if json.Unmarshal(resp, &who) != nil {
			who = map[string]any{"error": "not JSON: " + string(resp)}
		}
		_ = out.Encode(who)
	}
	time.Sleep(*hold)
	if failed > 0 {
		os.Exit(1)
	}
}
