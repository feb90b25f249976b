package httpapi

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"
)

const testToken = "s3cret-token-0123456789"

func TestAuthRequiresTheToken(t *testing.T) {
	t.Parallel()
	d, base := serveFiles(t, map[string]string{"a.txt": "private words"}, WithAuth(AuthMode{Token: testToken}))
	id := docID(t, d, "a.txt")
	url := base + "/files/" + id

	resp, body := send(t, "GET", url, "")
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") ||
		strings.Contains(body, "private") {
		t.Fatalf("no token: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	for _, h := range []string{"Bearer wrong-token-0123456789", "Bearer " + testToken + "x", "Basic " + basic("u", "nope"), "Token " + testToken} {
		if resp, _ := send(t, "GET", url, "", "Authorization", h); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", h, resp.StatusCode)
		}
	}
	for _, h := range []string{"Bearer " + testToken, "bearer " + testToken, "Basic " + basic("anyone", testToken)} {
		if resp, body := send(t, "GET", url, "", "Authorization", h); resp.StatusCode != 200 || body != "private words" {
			t.Errorf("Authorization %q: %d %q, want the file", h, resp.StatusCode, body)
		}
	}
	// Liveness stays open for container healthchecks; it says nothing.
	if resp, _ := send(t, "GET", base+"/healthz", ""); resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	// Any Host is fine with a token (a proxy may use its own name).
	if resp, _ := send(t, "GET", url, "", "Authorization", "Bearer "+testToken, "Host", "nas.example"); resp.StatusCode != 200 {
		t.Fatalf("named host with token: %d", resp.StatusCode)
	}
}

func TestAuthSlowsDownGuessing(t *testing.T) {
	t.Parallel()
	_, base := serveFiles(t, nil, WithAuth(AuthMode{Token: testToken}))
	for i := 0; i < freeFailures; i++ {
		if resp, _ := send(t, "GET", base+"/readyz", "", "Authorization", "Bearer guess"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i, resp.StatusCode)
		}
	}
	resp, _ := send(t, "GET", base+"/readyz", "", "Authorization", "Bearer "+testToken)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("after %d failures even the right token waits: %d %v", freeFailures, resp.StatusCode, resp.Header)
	}
}

func TestFailureLimiterSpacing(t *testing.T) {
	t.Parallel()
	l := &failureLimiter{seen: map[string]*failures{}}
	now := time.Unix(1000, 0)
	for i := 0; i < freeFailures; i++ {
		if l.wait("a", now) != 0 {
			t.Fatalf("failure %d already waits", i)
		}
		l.fail("a", now)
	}
	if l.wait("a", now) != failureSpacing || l.wait("b", now) != 0 {
		t.Fatal("the guessing address must wait, others not")
	}
	if l.wait("a", now.Add(failureSpacing)) != 0 {
		t.Fatal("one attempt per spacing")
	}
	l.succeed("a")
	if l.wait("a", now) != 0 {
		t.Fatal("a success clears the count")
	}
}

func TestWithoutTokenOnlyLoopbackHostsAreAnswered(t *testing.T) {
	t.Parallel()
	_, base := serveFiles(t, nil, WithAuth(AuthMode{CheckHost: true}))
	for host, want := range map[string]int{
		"127.0.0.1:8080": 200, "[::1]:8080": 200, "localhost:8080": 200, "app.localhost": 200, "LOCALHOST.": 200,
		"evil.example:8080": http.StatusMisdirectedRequest, "127.0.0.1.evil.example": http.StatusMisdirectedRequest,
	} {
		if resp, _ := send(t, "GET", base+"/readyz", "", "Host", host); resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func basic(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}
