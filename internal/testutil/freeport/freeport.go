// Package freeport hands out loopback TCP addresses for test servers that must be told their
// port before they start (redis-server, Meilisearch, homeindexd).
//
// Why not listen on 127.0.0.1:0 and close: that port comes from the kernel's ephemeral range,
// which the outgoing connections of every test on the machine also draw from, so between the
// close and the server's bind an outgoing connection can take it ("bind: address already in
// use"). Ports below the ephemeral range are only ever taken by explicit binds. A random pick
// there, checked by a bind and never handed out twice by one process, makes a collision rare;
// callers that can retry a start still do.
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// span is how many ports below the ephemeral range are used.
const span = 12000

var (
	mu     sync.Mutex
	handed = map[int]bool{}
)

// Port returns a loopback TCP port that was free a moment ago and that this process has not
// handed out before.
func Port() (int, error) {
	low := ephemeralLow()
	mu.Lock()
	defer mu.Unlock()
	for range 1000 {
		p := low - 1 - rand.IntN(span)
		if handed[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		handed[p] = true
		return p, nil
	}
	return 0, errors.New("freeport: no free port below the ephemeral range after 1000 tries")
}

// Addr is Port as "127.0.0.1:port".
func Addr() (string, error) {
	p, err := Port()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768 when unknown).
func ephemeralLow() int {
	const fallback = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return fallback
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return fallback
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= span+1024 {
		return fallback
	}
	return n
}
