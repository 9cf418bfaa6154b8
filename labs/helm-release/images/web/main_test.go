package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	if _, err := handler(""); err == nil || !strings.Contains(err.Error(), "GREETING") {
		t.Errorf("an empty greeting: %v, want an error naming GREETING", err)
	}
	h, err := handler("Hello from the shop")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/": "Hello from the shop\n", "/healthz": "ok\n"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		body, _ := io.ReadAll(rec.Result().Body)
		if rec.Code != 200 || string(body) != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, rec.Code, body, want)
		}
	}
}
